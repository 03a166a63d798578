// vllm-ascend's capture (patch/worker/patch_routed_experts_capture.py, capture, added by #9728
// de2c7f84cd and unchanged up to main 182b75ea) as policy models: the released versions and the
// fix this project proposes (../shared/spec/ascend-contract.md section 3).
#pragma once

#include <memory>
#include <string_view>

#include "reference/policy.hpp"

namespace r3::ascend {

enum class Version {
  main,  // "ascend": the six branches in order, then the silent layer guard
  v026,  // "ascend-0.26": releases/v0.26.0rc's manual hook, which never reaches capture
  fixed  // "ascend-fixed": rows placed from the comm type and SP, every TP rank gathering alike
};

inline constexpr std::string_view kPolicyMain = "ascend";
inline constexpr std::string_view kPolicy026 = "ascend-0.26";
inline constexpr std::string_view kPolicyFixed = "ascend-fixed";

// Branch names beyond capture.hpp's (B1 single, B2 naive_total, B3 local, B5 sp_allgather, B6 error).
inline constexpr std::string_view kBranchPaddedTotal = "padded_total";  // B4: n == max * D
inline constexpr std::string_view kBranchHookSkipped = "hook_skipped";  // 0.26: capture never called
inline constexpr std::string_view kBranchLayerGuard = "layer_guard";    // layer >= L: returns silently

std::unique_ptr<CapturePolicy> make_policy(Version version);

}  // namespace r3::ascend
