// TensorRT-LLM's request lifecycle (reference/trace/lifecycle.hpp; docs/lifecycle-contract.md
// 2.5, rules R1 to R10): three versions, the patches between them and the fixed model, and
// TensorRT-LLM's rules for a trace. Handed out by the engine's EngineModel::lifecycle().
//
//   trtllm           the later stored version (L, stored copy 68348127803; the index's commit aa94b01)
//   trtllm-06a976ce  route_capture.py as the spec read it (E, stored copy 57903209176)
//   trtllm-fixed     the fixed model (every patch below applied)
#pragma once

#include "reference/trace/lifecycle.hpp"

namespace r3::trtllm {

const LifecycleModel& lifecycle_model();

inline constexpr std::string_view kVersionE = "trtllm-06a976ce";
inline constexpr std::string_view kVersionL = "trtllm";
inline constexpr std::string_view kVersionFixed = "trtllm-fixed";

// The patches, as indices into lifecycle_model().patches().
enum LifecyclePatchIndex : int {
  kPatchStoreFollowsKv = 0,     // E, L (R3)
  kPatchDecodePosition = 1,     // E, L (R2, N2)
  kPatchInclusiveRange = 2,     // E (R6)
  kPatchRangeToFinish = 3,      // E, L (R6, N3)
  kPatchSharedCacheEpoch = 4,   // E, L (R4)
  kPatchCacheEveryRow = 5,      // E, L (R4)
  kPatchCommitBeforeReuse = 6,  // E (R9)
};

}  // namespace r3::trtllm
