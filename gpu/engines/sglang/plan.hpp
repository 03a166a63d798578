// SGLang's step on the pipeline (docs/GPU.md, "SGLang"): per capture call (two under TBO) the
// MoE input each rank's capture sees is assembled from the rows the ranks hold (the DP gather
// under DP attention, the capturer's attn-TP all-gather for DeepEP), the capture kernel writes
// that whole tensor at row 0 of the rank's guarded device buffer of R rows, and after the last
// call a window kernel copies the rows the policy's window publishes into the guarded image
// the judge reads. sglang-fixed writes each call's rows at their place and publishes [0, n_r).
#pragma once

#include "gpu/detail/device_plan.hpp"
#include "gpu/detail/plan.hpp"
#include "reference/case.hpp"
#include "reference/layout.hpp"

namespace r3::gpu::detail {

// Fills `out` (its allocation already set) and appends the step's device work to `plan`.
void plan_sglang_step(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan,
                      PlannedCase& out);

}  // namespace r3::gpu::detail
