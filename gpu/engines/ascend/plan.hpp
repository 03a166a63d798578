// vllm-ascend's step on the pipeline: its calls are laid out in the base terms (the per-DP,
// shared and TP-sliced or tensor_split tensors of reference/engines/ascend/layout.cpp), and only
// the policies read the step's comm type, so the base planner carries them out: the comm type's
// rows materialised per rank, the branch-5 TP all-gather where a decision reads it, and the
// capture kernel writing each copy.
#pragma once

#include "gpu/engine_planner.hpp"

namespace r3::ascend {

// Registered in gpu/engines/registry.cpp: one capture image per rank.
const gpu::EngineStepPlanner& gpu_step_planner();

}  // namespace r3::ascend
