#include "reference/policy.hpp"

#include "reference/engines/sglang/policy.hpp"

namespace r3 {

std::unique_ptr<CapturePolicy> make_sglang_policy() { return sglang::make_policy(sglang::Version::upstream); }
std::unique_ptr<CapturePolicy> make_sglang_miles_policy() { return sglang::make_policy(sglang::Version::miles); }
std::unique_ptr<CapturePolicy> make_sglang_fixed_policy() { return sglang::make_policy(sglang::Version::fixed); }

std::unique_ptr<CapturePolicy> make_policy(std::string_view name) {
  if (name == "vllm-50874") return make_vllm_50874_policy();
  if (name == "vllm-pre-50874") return make_vllm_pre_50874_policy();
  if (name == "r3-fixed") return make_r3_fixed_policy();
  if (name == "sglang") return make_sglang_policy();
  if (name == "sglang-miles") return make_sglang_miles_policy();
  if (name == "sglang-fixed") return make_sglang_fixed_policy();
  return nullptr;
}

std::string_view policy_names() { return "vllm-50874, vllm-pre-50874, r3-fixed, sglang, sglang-miles, sglang-fixed"; }

}  // namespace r3
