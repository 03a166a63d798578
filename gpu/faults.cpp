#include "gpu/faults.hpp"

#include <string>

namespace r3::gpu {

std::string_view to_string(Fault f) {
  switch (f) {
    case Fault::none: return "none";
    case Fault::tp_major_order: return "tp-major-order";
    case Fault::unpadded_offset: return "unpadded-offset";
    case Fault::no_trim: return "no-trim";
    case Fault::floor_sp: return "floor-sp";
    case Fault::skip_tp_gather: return "skip-tp-gather";
    case Fault::last_shard_pad: return "last-shard-pad";
    case Fault::layer_unchecked: return "layer-unchecked";
    case Fault::narrow_int16: return "narrow-int16";
    case Fault::off_by_one_copy: return "off-by-one-copy";
    case Fault::replay_per_rank: return "replay-per-rank";
    case Fault::replay_dp_under_ep: return "replay-dp-under-ep";
    case Fault::chunk_row0: return "chunk-row0";
  }
  return "?";
}

const std::vector<Fault>& all_faults() {
  static const std::vector<Fault> faults = {
      Fault::tp_major_order, Fault::unpadded_offset, Fault::no_trim,         Fault::floor_sp,
      Fault::skip_tp_gather, Fault::last_shard_pad,  Fault::layer_unchecked, Fault::narrow_int16,
      Fault::off_by_one_copy, Fault::replay_per_rank, Fault::replay_dp_under_ep, Fault::chunk_row0};
  return faults;
}

Result<Fault> parse_fault(std::string_view name) {
  if (name.empty() || name == "none") return Fault::none;
  std::string valid;
  for (Fault f : all_faults()) {
    if (to_string(f) == name) return f;
    valid += (valid.empty() ? "" : ", ") + std::string(to_string(f));
  }
  return Error{"unknown gpu fault '" + std::string(name) + "'; valid faults: " + valid};
}

}  // namespace r3::gpu
