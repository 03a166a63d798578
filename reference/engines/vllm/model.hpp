// The vLLM engine (docs/layout-contract.md sections 1 to 10): its cases are the case format's
// own fields, laid out by the base layout (reference/layout.hpp), and its models, profiles and
// faults live in this folder. Registered first: the default engine.
#pragma once

#include "reference/engine.hpp"
#include "reference/engine_model.hpp"

namespace r3::vllm {

const EngineModel& model();
// Its handle in the registry.
Engine engine();

// The most rows of a capture buffer the concrete judge materialises (fuzz/oracle/judge_case.hpp).
inline constexpr int64_t kMaterialisedMaxTokens = 64;

}  // namespace r3::vllm
