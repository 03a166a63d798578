// vLLM's request lifecycle (reference/trace/lifecycle.hpp; docs/lifecycle-contract.md 2.3 and
// 2.4): three versions, the patches between them and the fixed model, and vLLM's rules for a
// trace. The model is handed out by vLLM's EngineModel::lifecycle() (model.cpp).
//
//   vllm-50874       vLLM main, the AuxOutput connector ("V4"): lifecycle_blocks.cpp
//   vllm-pre-50874   the slot-keyed generation releases shipped ("V1", #28284): lifecycle_slots.cpp
//   r3-fixed         the fixed model: the slot walk with every row moved with its KV
#pragma once

#include "reference/trace/lifecycle.hpp"

namespace r3::vllm {

const LifecycleModel& lifecycle_model();

// The patches, as indices into lifecycle_model().patches().
enum LifecyclePatchIndex : int {
  kPatchGenerationOnWeightUpdate = 0,  // vllm-50874
  kPatchPreemptReemit = 1,             // vllm-50874
  kPatchOffloadRows = 2,               // vllm-pre-50874
  kPatchPdRows = 3,                    // vllm-pre-50874
  kPatchPreemptedRows = 4,             // vllm-pre-50874
  kPatchStoreCapacity = 5,             // vllm-50874
};

}  // namespace r3::vllm
