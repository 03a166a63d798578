// The robustness target's body: one byte string through every decoder and validator r3fuzz
// has (the binary codec under both limits, the JSON case reader, metadata overrides through
// derive_step, the deployment reader, the production-log reader, the adapter reply parser),
// checking the round-trip invariants on what decodes and running every renderer (explain as
// text and JSON, case JSON, the regression entry and TEST) on every case small enough to derive. Every error must come back as a value; an invariant broken is an r3fuzz bug and
// aborts through R3_CHECK.
#pragma once

#include <cstdint>
#include <span>

namespace r3 {

// How many decoders accepted the input (for tests; the fuzz target ignores it).
int exercise_decoders(std::span<const uint8_t> bytes);

}  // namespace r3
