// The SGLang engine (docs/layout-contract.md section 11, ../shared/spec/sglang-contract.md): its
// cases carry a forward (forward.hpp, in Case::engine_fields), its steps a forward layout
// (forward_layout.hpp, in Step::engine_step), and everything else it needs lives in this folder.
#pragma once

#include "reference/engine_model.hpp"

namespace r3::sglang {

const EngineModel& model();

// The largest device buffer of any SGLang model the concrete judge materialises.
inline constexpr int64_t kMaterialisedMaxRows = 512;

}  // namespace r3::sglang
