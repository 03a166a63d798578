// The structure-aware mutator behind LLVMFuzzerCustomMutator / LLVMFuzzerCustomCrossOver:
// decode the bytes into a case, change one field (pushing counts toward the edges where the
// the contract's corner cases live), repair the case so it is valid again, re-encode. Plain library
// code, so it is unit-tested without libFuzzer; the hooks in custom_mutator.cpp are thin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "fuzz/codec/case_binary.hpp"
#include "reference/case.hpp"
#include "reference/profile.hpp"

namespace r3 {

// One field-level change. Each names the part of the case it touches.
enum class Mutation {
  dp,            // D: new size, tokens resized
  tp,            // T: from {1, 2, 3, 4, 6, 8} (and the limits)
  flags,         // toggles ep, sp, monolithic or idle_dummy
  tokens,        // one rank's real tokens, toward 0, 1, M, M-1, multiples of T +-1, bucket edges
  token_shape,   // every rank idle, one rank holding everything, or all ranks equal
  max_tokens,    // M toward the largest real count, multiples of T +-1, small values
  path,          // another path valid for the topology
  padding,       // none, dp_max, vLLM's default capture sizes or sizes around (and above) M
  model,         // layers, top-k, experts (E above int16 range for narrow storage), layer L-1
  microbatches,  // U in 1..4 (with dp_max padding)
  dp_chunk,      // none, 1, or around a rank's row count
  metadata,      // the derived metadata with one entry, its length or local_sizes perturbed
};

inline constexpr int kMutationCount = 12;
std::string_view to_string(Mutation m);

// The mutator draws from libFuzzer's per-call seed; the generator's portable r3::Rng
// (fuzz/generate/rng.hpp) is a different source with its own pinned sequence.
using MutatorRng = std::mt19937_64;

// Makes any case valid within `limits` by clamping and resolving conflicts in a fixed order
// (sizes, model, tokens, padding, path, calls, metadata). A valid case within the limits comes
// back unchanged.
Case repair(Case c, const BinaryLimits& limits);

// Applies `m` and repairs, then fits the case into `profile` (fit_to_profile: the step the
// profile's engine would run). The result is valid, within the limits and inside the profile.
Case mutate(const Case& c, Mutation m, MutatorRng& rng, const BinaryLimits& limits, Profile profile = kDefaultProfile);

// A mutation chosen at random (uniformly over the kinds).
Case mutate(const Case& c, MutatorRng& rng, const BinaryLimits& limits, Profile profile = kDefaultProfile);

// Takes each top-level part (topology, model and layer, M, tokens, padding, path and
// monolithic, calls, metadata) from `a` or `b` at random, then repairs and fits the profile.
Case cross_over(const Case& a, const Case& b, MutatorRng& rng, const BinaryLimits& limits,
                Profile profile = kDefaultProfile);

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
