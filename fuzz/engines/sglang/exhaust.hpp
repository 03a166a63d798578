// SGLang's part of `r3fuzz exhaust`'s space (fuzz/exhaust/case_space.hpp), in one fixed order. A
// unit is (D, T, a2a, forward, counts); it expands into its sizes, graphs, TBO and layers:
//   D in 1..max_dp (DP attention when D > 1), T in 1..max_tp, a2a one backend of each capture
//   class (none, deepep, mooncake for the scattered ones, pplx for its forced MAX_LEN),
//   forward extend < decode < verify (w = 2), counts of sum <= max_tokens, each <= max_m;
//   then chunked_prefill_size (-1 with max_prefill_tokens = max_m, then 1..max_m),
//   max_running_requests 1..max_m, graphs (none; decode [a]; decode [a, 2a]; prefill [max_m];
//   decode [a] and prefill [max_m], a the bucket alignment), the last decode bucket (none, the
//   first), TBO off < on, layer 0 < L-1.
// A unit's D and T are its CaseUnit::topology's, its counts the tokens (extend) or requests
// (decode, verify) per DP rank, and its a2a and forward kind the UnitShape in CaseUnit::shape.
#pragma once

#include "fuzz/exhaust/engine_exhaust.hpp"
#include "reference/engines/sglang/forward.hpp"

namespace r3::sglang {

struct UnitShape {
  A2a a2a = A2a::none;
  ForwardKind kind = ForwardKind::extend;
  bool operator==(const UnitShape&) const = default;
};

}  // namespace r3::sglang
