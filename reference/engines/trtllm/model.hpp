// The TensorRT-LLM engine (PR #18397, tensorrt_llm/_torch/route_capture.py): its per-step cases
// are the vLLM family's base case (one DP rank, one MoE call per layer, real rows then CUDA-graph
// padding), laid out by the base layout; its request lifecycle (lifecycle.hpp) keys rows by
// (request, absolute position). docs/lifecycle-contract.md 2.5 holds the facts, with commits.
#pragma once

#include "reference/engine.hpp"
#include "reference/engine_model.hpp"

namespace r3::trtllm {

const EngineModel& model();
// Its handle in the registry.
Engine engine();

// The two versions of route_capture.py the contract read (docs/lifecycle-contract.md section 0):
// E, the spec's 06a976ce (stored copy 57903209176), and L, the later stored copy (68348127803),
// the index's stored commit of the path.
inline constexpr const char* kCommitE = "06a976ce";
inline constexpr const char* kCommitL = "aa94b01";

}  // namespace r3::trtllm
