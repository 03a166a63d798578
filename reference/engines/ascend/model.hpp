// The vllm-ascend engine (../shared/spec/ascend-contract.md, docs/ascend-contract.md): a vLLM-family
// case whose Ascend fields (fields.hpp, in Case::engine_fields) pick the comm type, and whose
// steps carry that comm type (layout.hpp, in Step::engine_step). Everything it needs lives here.
#pragma once

#include "reference/engine_model.hpp"

namespace r3::ascend {

const EngineModel& model();

// The largest capture buffer the concrete judge materialises.
inline constexpr int64_t kMaterialisedMaxTokens = 256;

}  // namespace r3::ascend
