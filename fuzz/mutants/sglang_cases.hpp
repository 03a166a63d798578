// SGLang cases for the kill matrix, until the case generator (fuzz/generate) draws them: a
// small seeded drawer over the forwards that tell SGLang's faults apart (DP attention with
// every padding mode, attn_tp > 1, DeepEP and the other a2a classes, decode and verify graphs,
// TBO, idle ranks). MutantsOptions::sglang_cases holds it; point that at the generator once it
// draws SGLang cases.
#pragma once

#include <cstdint>

#include "reference/case.hpp"

namespace r3 {

// Case `index` of `seed`, valid and inside `profile` (an SGLang profile, or any), small enough
// to run concretely. Depends on (seed, index, profile) alone.
Case draw_sglang_case(uint64_t seed, uint64_t index, Profile profile);

}  // namespace r3
