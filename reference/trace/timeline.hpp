// The timeline: a valid trace, walked once. build_timeline() checks every rule a trace obeys
// whatever its engine (docs/TRACES.md, "The rules") and records what every engine model and the
// oracle read: each step's rows per DP rank in batch order, which requests finish at its result
// processing, and for every request the truth (route.hpp) of each position it keeps.
//
// The walk, per request r (P prompt tokens, g tokens sampled so far, c positions whose KV r holds):
//  - extend [a, b): a == c, b <= P + g; it samples a token when b == P + g (the last known token);
//  - decode q: q == c == P + g - 1; samples one token;
//  - verify q (width k, accepted a): q == c == P + g - 1; forwards q..q+k, keeps q..q+a, samples a+1;
//  - hit len: before r's first forward (c == 0), len positions cached by earlier steps' forwards;
//  - preempt: c = 0 (r recomputes); offload / restore: r does not run in between;
//  - pd_handoff: r's prompt KV comes from a prefill instance, which samples the first token;
//  - abort: a waiting request (nothing forwarded) ends with no output; a running one ends at the
//    result processing of the step it runs in next, or at once when it never runs again.
// r finishes once g reaches its target (max_new, or the outputs through the stop); under
// `overlap` it may run one step more, whose row is discarded (a lagging row).
#pragma once

#include <cstdint>
#include <vector>

#include "reference/error.hpp"
#include "reference/trace/route.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

struct BatchRow {
  int req = 0;
  int64_t pos = 0;
  bool kept = true;      // false: a rejected draft, or a lagging row under overlap
  bool lagging = false;  // the extra decode of a request that already finished (overlap)
  bool operator==(const BatchRow&) const = default;
};

struct StepView {
  int version = 0;  // the weight version this step's forward runs at (after its events)
  std::vector<std::vector<BatchRow>> rows;  // [dp][row], batch order
  std::vector<int> finished;  // requests whose result processing ends them this step, in order
  std::vector<int> aborted_before;  // requests an abort event ends before this step's forward
};

struct RequestView {
  int64_t prompt_len = 0;    // P
  int64_t kept_outputs = 0;  // N
  int64_t total = 0;         // S = P + N
  int64_t start = 0;         // s = min(start_len, S - 1)
  int finish_step = -1;      // the step whose result processing (or abort) ends it; -1: unfinished
  bool returns_output = false;  // finished, and not an abort before any forward
  std::vector<uint64_t> prefix_hash;  // per position [0, S)
  std::vector<RouteRef> expected;     // one per position [s, S - 1): the truth at its version
};

struct Timeline {
  std::vector<StepView> steps;
  std::vector<RequestView> requests;

  // Whether `ref` is the route the truth holds at `expected` (same prefix, same version).
  bool same_route(const RouteRef& ref, const RouteRef& expected) const;
};

// Errors name the step, the request and the rule: "steps[3].run[0]: request 1 extends from 2 but
// holds KV through 4".
Result<Timeline> build_timeline(const Trace& t);

}  // namespace r3
