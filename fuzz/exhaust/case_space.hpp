// The bounded case space of `r3fuzz exhaust`, enumerated in one fixed total order so that
// "the smallest counterexample" means the same case on every machine and thread count.
//
// The space is split into units, one per (D, T, flags, token vector); a unit expands into its
// cases. The order, most significant first:
//   D, T, flags (plain < ep < ep+sp), sum of tokens, tokens (lexicographic), M,
//   path (single | gathered, local | sp_shard), padding variant (below), monolithic (false < true),
//   microbatches U, dp_chunk C (none < 1 < 2 ...), layer (0 < L-1).
// Enumerated per unit and M:
//   - M in max(1, max tokens) .. max_m; every real-token count is <= M;
//   - paths allowed by the topology: single when D = 1; gathered and local (sp_shard with SP);
//   - padding: none, dp_max, cudagraph [1] (any step above one token runs eager),
//     cudagraph [2, 4, .., first power of two >= M], cudagraph [M+1] (a bucket above M);
//   - monolithic true and false on single and gathered;
//   - U in 1..4 with dp_max and D > 1;
//   - C in 1..max_d(N_d)+1 on local and sp_shard (N_d = n_d, or ceil(n_d/T) with SP): a larger C
//     gives the same single chunk;
//   - layer 0 and L-1.
// Metadata overrides (the rejection cases) are not enumerated. A profile of SGLang's enumerates
// SGLang units instead (fuzz/exhaust/sglang_space.hpp), and profile any both engines', vLLM's first.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "fuzz/exhaust/bounds.hpp"
#include "fuzz/exhaust/sglang_space.hpp"
#include "fuzz/exhaust/compositions.hpp"
#include "reference/case.hpp"

namespace r3 {

struct CaseUnit {
  Topology topology;
  std::vector<int64_t> tokens;
  std::optional<SglangUnit> sglang = std::nullopt;  // an SGLang unit (fuzz/exhaust/sglang_space.hpp): the fields above unused
};

// The units within the bounds, in the order above, made one at a time: memory does not grow
// with the space, whatever the bounds (count_space() says how many come).
class UnitStream {
 public:
  explicit UnitStream(const ExhaustBounds& bounds);
  // The next unit into `unit`; false when every unit has come.
  bool next(CaseUnit& unit);

 private:
  const ExhaustBounds bounds_;
  std::vector<CaseUnit> shapes_;  // one per (topology, or SGLang's D, T, a2a, forward), counts empty
  size_t shape_ = 0;
  std::optional<exhaust::CountVectors> counts_;  // the current shape's
};

// Every unit at once, in the same order: for small bounds (tests).
std::vector<CaseUnit> enumerate_units(const ExhaustBounds& bounds);

// How many units and cases (valid or not) the bounds enumerate, computed without listing them:
// a unit's case count depends only on its topology (SGLang: D, T, a2a, forward) and its largest
// count, so units are counted by that (a small dynamic programme) and one unit of each kind is
// counted (for_each_case, count_sglang_cases). Exact for profile any; for a profile, whose cases
// are a subset, an upper bound (vLLM's filters depend on every token count). Allocates nothing
// that grows with the space. Saturates at INT64_MAX.
struct SpaceSize {
  int64_t units = 0;
  int64_t cases = 0;
};
SpaceSize count_space(const ExhaustBounds& bounds);

// Calls `visit` on each case of the unit, in order, until it returns false. Returns the number
// of cases visited. The Case passed is reused between calls.
int64_t for_each_case(const CaseUnit& unit, const ExhaustBounds& bounds, const std::function<bool(const Case&)>& visit);

// The number of padding variants enumerated, and variant `index` for maximum tokens M.
inline constexpr int kPaddingVariants = 5;
Padding padding_variant(int index, int64_t max_num_tokens);

}  // namespace r3
