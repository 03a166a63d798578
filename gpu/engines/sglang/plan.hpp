// SGLang's step on the pipeline (docs/GPU.md, "SGLang"): per capture call (two under TBO) the
// MoE input each rank's capture sees is assembled from the rows the ranks hold (the DP gather
// under DP attention, the capturer's attn-TP all-gather for DeepEP), the capture kernel writes
// that whole tensor at row 0 of the rank's guarded device buffer of R rows, and after the last
// call a window kernel copies the rows the policy's window publishes into the guarded image
// the judge reads. sglang-fixed writes each call's rows at their place and publishes [0, n_r).
#pragma once

#include "gpu/engine_planner.hpp"

namespace r3::sglang {

// SGLang's planner, registered in gpu/engines/registry.cpp: two images per rank (the device
// buffer and the published image).
const gpu::EngineStepPlanner& gpu_step_planner();

}  // namespace r3::sglang
