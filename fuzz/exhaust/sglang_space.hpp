// The SGLang part of `r3fuzz exhaust`'s space (case_space.hpp), in the same fixed order. A unit
// is (D, T, a2a, forward, counts); it expands into its sizes, graphs, TBO and layers:
//   D in 1..max_dp (DP attention when D > 1), T in 1..max_tp, a2a one backend of each capture
//   class (none, deepep, mooncake for the scattered ones, pplx for its forced MAX_LEN),
//   forward extend < decode < verify (w = 2), counts of sum <= max_tokens, each <= max_m;
//   then chunked_prefill_size (-1 with max_prefill_tokens = max_m, then 1..max_m),
//   max_running_requests 1..max_m, graphs (none; decode [a]; decode [a, 2a]; prefill [max_m];
//   decode [a] and prefill [max_m], a the bucket alignment), the last decode bucket (none, the
//   first), TBO off < on, layer 0 < L-1.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "fuzz/exhaust/bounds.hpp"
#include "reference/case.hpp"

namespace r3 {

struct SglangUnit {
  int dp = 1;
  int tp = 1;
  sglang::A2a a2a = sglang::A2a::none;
  sglang::ForwardKind kind = sglang::ForwardKind::extend;
  std::vector<int64_t> counts;  // tokens (extend) or requests per DP rank
};

// Every (D, T, a2a, forward) in order, counts left empty: each expands into the count vectors of
// its D (compositions.hpp, CountVectors), as case_space.hpp's UnitStream does.
std::vector<SglangUnit> sglang_unit_shapes(const ExhaustBounds& bounds);

// Every unit at once, in order: for small bounds (tests).
std::vector<SglangUnit> enumerate_sglang_units(const ExhaustBounds& bounds);

// Calls `visit` on each case of the unit inside bounds.profile, in order, until it returns
// false; returns the number visited.
int64_t for_each_sglang_case(const SglangUnit& unit, const ExhaustBounds& bounds,
                             const std::function<bool(const Case&)>& visit);

// What for_each_sglang_case() returns for `unit` with a visitor that never stops, computed from
// the sizes its counts fit and the knobs at one of them instead of visiting every case: sixteen
// validations, where visiting all takes up to 16,896 at --max-m 32 (count_space() counts each
// kind of unit this way).
int64_t count_sglang_cases(const SglangUnit& unit, const ExhaustBounds& bounds);

}  // namespace r3
