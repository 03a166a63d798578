// vLLM's policy models (docs/layout-contract.md sections 7 to 9), as the vLLM engine registers
// them (reference/engines/vllm/model.cpp) and as tests build them directly.
#pragma once

#include <memory>

#include "reference/policy.hpp"

namespace r3 {

// vLLM after PR #50874 (docs/layout-contract.md section 7).
std::unique_ptr<CapturePolicy> make_vllm_50874_policy();
// vLLM before PR #50874: only the naive gathered layout, replay buffer of M rows.
std::unique_ptr<CapturePolicy> make_vllm_pre_50874_policy();
// The proposed fix: correct on every path of the model (docs/layout-contract.md sections 7 to 9).
std::unique_ptr<CapturePolicy> make_r3_fixed_policy();

}  // namespace r3
