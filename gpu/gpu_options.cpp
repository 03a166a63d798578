#include "gpu/gpu_options.hpp"

#include <string>

#include "reference/engine_model.hpp"

namespace r3::gpu {

const std::string& default_gpu_policy() {
  static const std::string name(Engine{}.model().released_policies().front());
  return name;
}

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::host: return "host";
    case Backend::virtual_: return "virtual";
    case Backend::nccl: return "nccl";
  }
  return "?";
}

std::string_view to_string(Selection s) {
  return s == Selection::host_decision ? "host-decision" : "device-offsets";
}

Result<Backend> parse_backend(std::string_view text) {
  for (Backend b : {Backend::host, Backend::virtual_, Backend::nccl})
    if (to_string(b) == text) return b;
  return Error{"unknown gpu backend '" + std::string(text) + "'; valid backends: host, virtual, nccl"};
}

Result<Selection> parse_selection(std::string_view text) {
  for (Selection s : {Selection::host_decision, Selection::device_offsets})
    if (to_string(s) == text) return s;
  return Error{"unknown gpu row selection '" + std::string(text) + "'; valid: host-decision, device-offsets"};
}

}  // namespace r3::gpu
