#include "reference/policy.hpp"

namespace r3 {

std::unique_ptr<CapturePolicy> make_policy(std::string_view name) {
  if (name == "vllm-50874") return make_vllm_50874_policy();
  if (name == "vllm-pre-50874") return make_vllm_pre_50874_policy();
  if (name == "r3-fixed") return make_r3_fixed_policy();
  return nullptr;
}

std::string_view policy_names() { return "vllm-50874, vllm-pre-50874, r3-fixed"; }

}  // namespace r3
