// vllm-ascend's own fields of the case domain: the choices its draw (draw.cpp) asks for beyond
// the case format's own. Each is a slot of Field's own ones (fuzz/generate/source.hpp); the draw
// part describes them to generic code (EngineDraw::own_fields), which never names them.
#pragma once

#include <array>

#include "fuzz/generate/case_domain.hpp"
#include "fuzz/generate/source.hpp"

namespace r3::ascend::field {

inline constexpr Field chip = own_field(0);        // ascend::Chip
inline constexpr Field runner = own_field(1);      // ascend::Runner
inline constexpr Field graph = own_field(2);       // ascend::Graph
inline constexpr Field lora = own_field(3);
inline constexpr Field fused_mc2 = own_field(4);
inline constexpr Field mc2_tokens = own_field(5);  // B of the MC2 capacity; 0: derived

// The chip and the knobs pick the comm type, which places the rows (path); the runner and graph
// mode pad (padding).
inline constexpr std::array<FieldInfo, 6> kInfos = {{
    {chip, "chip", CasePart::path},
    {runner, "runner", CasePart::padding},
    {graph, "graph", CasePart::padding},
    {lora, "lora", CasePart::path},
    {fused_mc2, "fused_mc2", CasePart::path},
    {mc2_tokens, "mc2_tokens", CasePart::path},
}};

}  // namespace r3::ascend::field
