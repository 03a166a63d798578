// The case generator: seeded, reproducible, valid by construction. Case i of seed s depends
// on (s, i) alone, so any case of a campaign can be regenerated from its seed and index.
// It aims at the edges of the layout contract (docs/layout-contract.md sections 1 to 9): ranks with 0 and 1
// tokens, n_d = M, n_d mod T != 0, M not divisible by T, one rank holding every token, heavy
// SP padding near capacity, CUDA-graph buckets above M, the last layer, micro-batches and
// DP chunks, on every path and padding mode.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/profile.hpp"

namespace r3 {

// tiny: D <= 4, M <= 16 (bugs read at a glance); small: M <= 64, every value encodable
// (concrete mode); production: M up to 65536, D up to 64 (symbolic mode).
enum class SizeClass { tiny, small, production };
std::string_view to_string(SizeClass size);
Result<SizeClass> parse_size_class(std::string_view text);

struct GeneratorOptions {
  // Every case lies inside this profile (reference/profile.hpp): only steps the engine can run.
  Profile profile = kDefaultProfile;
  std::vector<SizeClass> sizes = {SizeClass::tiny, SizeClass::small, SizeClass::production};
  // Inconsistent metadata overrides (corner case 8), under profile any only. Off by default:
  // vllm-50874 cannot tell some of them from shapes, so they would drown every other finding.
  bool metadata_overrides = false;
  // Expert counts above 32768, which vLLM's int16 replay storage cannot hold (corner case 9).
  bool wide_experts = false;
};

struct GeneratedCase {
  Case c;
  SizeClass size = SizeClass::tiny;
};

// Case `index` of `seed`. Always valid (validate(c) is ok) and inside options.profile.
GeneratedCase generate_case(uint64_t seed, uint64_t index, const GeneratorOptions& options);

// vLLM's default CUDA-graph capture sizes: 1, 2, 4, then 8 to 248 by 8, then 256 to 512 by 16.
const std::vector<int64_t>& vllm_default_cudagraph_sizes();

}  // namespace r3
