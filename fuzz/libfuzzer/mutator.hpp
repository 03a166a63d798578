// The structure-aware mutator behind LLVMFuzzerCustomMutator / LLVMFuzzerCustomCrossOver.
// The corpus stays in the binary case codec (fuzz/codec/case_binary.hpp: every stored corpus
// file and regression case still replays); a mutation decodes the bytes into a case, redraws one
// of its fields from the case domain (fuzz/generate/case_domain.hpp) while replaying every other
// (fuzz/generate/replay_source.hpp), and re-encodes. The domain resolves every constraint and the
// active profile as it draws, so the result is valid and inside the profile with no repair step.
// Plain library code, so it is unit-tested without libFuzzer; the hooks in custom_mutator.cpp
// are thin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/generate/case_domain.hpp"
#include "fuzz/generate/replay_source.hpp"
#include "reference/case.hpp"
#include "reference/profile.hpp"

namespace r3 {

// The cases a fuzz target runs: the domain bounded by `limits` (so every case encodes and decodes
// unchanged under them), inside `profile`.
CaseDomain fuzz_domain(const BinaryLimits& limits, Profile profile = kDefaultProfile);

// Redraws `part` of `c` (its fields afresh from `rng`, the tokens of rank `rank` only when the
// part is the tokens and rank is given) and replays every other field.
Case mutate(const Case& c, CasePart part, Rng& rng, const CaseDomain& domain,
            size_t rank = ReplaySource::kEveryEntry);

// A part chosen at random (a random rank for the tokens); when its redraw changes nothing,
// another part not tried yet, and so on: the case comes back unchanged only when no part's
// redraw changed it.
Case mutate(const Case& c, Rng& rng, const CaseDomain& domain);

// Takes each part of the case from `a` or `b` at random and draws the child from the domain; a
// child equal to either parent is drawn again with other parts, and where that fails (a == b,
// or they differ in one part) the child is a mutation of `a`.
Case cross_over(const Case& a, const Case& b, Rng& rng, const CaseDomain& domain);

// The case mutation starts from when the input bytes do not decode: the smallest SP case.
Case starting_case();

// The byte-level entry points the libFuzzer hooks call: decode (or start from
// starting_case()), mutate, encode into `out` when it fits `max_size`. Returns the new size;
// when the encoding does not fit, the input is left as it was and its size returned.
size_t mutate_bytes(uint8_t* data, size_t size, size_t max_size, unsigned int seed,
                    const BinaryLimits& limits = concrete_binary_limits(), Profile profile = kDefaultProfile);
size_t cross_over_bytes(std::span<const uint8_t> a, std::span<const uint8_t> b, uint8_t* out, size_t max_size,
                        unsigned int seed, const BinaryLimits& limits = concrete_binary_limits(),
                        Profile profile = kDefaultProfile);

}  // namespace r3
