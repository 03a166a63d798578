// TensorRT-LLM's per-step capture models (policy.cpp), one per version of route_capture.py the
// contract read and the fixed one, as model.cpp registers them.
#pragma once

#include <memory>
#include <string_view>

#include "reference/policy.hpp"

namespace r3::trtllm {

inline constexpr std::string_view kPolicyE = "trtllm-06a976ce";
inline constexpr std::string_view kPolicyL = "trtllm";
inline constexpr std::string_view kPolicyFixed = "trtllm-fixed";

std::unique_ptr<CapturePolicy> make_policy_e();
std::unique_ptr<CapturePolicy> make_policy_l();
std::unique_ptr<CapturePolicy> make_policy_fixed();

}  // namespace r3::trtllm
