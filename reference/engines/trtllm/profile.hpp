// The per-step cases TensorRT-LLM's profile runs (model.cpp): the base case on one DP rank with
// one MoE call per layer (profile.cpp cites each rule).
#pragma once

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3::trtllm {

Status check_step_profile(const Case& c);
Case fit_step_to_profile(Case c);

}  // namespace r3::trtllm
