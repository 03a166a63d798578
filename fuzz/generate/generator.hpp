// The case generator: the case domain (case_domain.hpp) drawn from a seeded source, valid by
// construction. Case i of seed s depends on (s, i) alone, so any case of a campaign can be regenerated from its seed and index.
// It aims at the edges of the layout contract (docs/layout-contract.md sections 1 to 9): ranks with 0 and 1
// tokens, n_d = M, n_d mod T != 0, M not divisible by T, one rank holding every token, heavy
// SP padding near capacity, CUDA-graph buckets above M, the last layer, micro-batches and
// DP chunks, on every path and padding mode.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "fuzz/generate/case_domain.hpp"
#include "reference/case.hpp"
#include "reference/profile.hpp"

namespace r3 {

struct GeneratorOptions {
  // Every case lies inside this profile (reference/profile.hpp): only steps the engine can run.
  Profile profile = kDefaultProfile;
  std::vector<SizeClass> sizes = {SizeClass::tiny, SizeClass::small, SizeClass::production};
  // Inconsistent metadata overrides (corner case 8), under profile any only. Off by default:
  // vllm-50874 cannot tell some of them from shapes, so they would drown every other finding.
  bool metadata_overrides = false;
  // Expert counts above 32768, which vLLM's int16 replay storage cannot hold (corner case 9).
  bool wide_experts = false;
  // Under profile any: only this engine's cases (nullopt: each case draws its engine).
  std::optional<Engine> engine = std::nullopt;
};

struct GeneratedCase {
  Case c;
  SizeClass size = SizeClass::tiny;
};

// Case `index` of `seed`: a size class drawn from options.sizes, then the case domain drawn
// (case_domain.hpp) from the same seeded Rng. Always valid (validate(c) is ok) and inside
// options.profile.
GeneratedCase generate_case(uint64_t seed, uint64_t index, const GeneratorOptions& options);

}  // namespace r3
