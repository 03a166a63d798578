// Bounded exhaustive search over tiny traces (r3fuzz exhaust --traces): every trace of a small,
// declared space that the profile's engine runs, judged with one trace implementation, until the
// first difference. The space: one DP rank, TP 1, a one-layer top-1 model, page 1, a token budget
// of 4, prefix caching on; up to `max_requests` requests with prompts of 1 to `max_prompt` tokens
// over {1, 2} (so prompts share prefixes) and 1 to `max_outputs` outputs, each finishing on
// length; up to `max_steps` steps, in each of which every request does nothing, extends one
// position or to its last known token, or decodes, after optional events: a prefix hit of any
// length when it holds no KV, a preemption when it holds some, and one weight update (no flush)
// per trace. Steps are enumerated depth first and a prefix that breaks a rule is not extended, so
// the search visits only valid traces.
//
// With `copy_orders` the traces run under overlap (async) scheduling and each judged trace is
// judged once per completion order of its copies to host that the engine's window allows
// (EngineTraceDraw::copy_window; reference/trace/copies.hpp): every step's copy in order, or
// landing at any later step up to its latest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "fuzz/oracle/judge_trace.hpp"
#include "reference/engine.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

struct TraceSpaceBounds {
  int max_requests = 2;
  int max_steps = 4;
  int max_prompt = 2;
  int max_outputs = 2;
  bool copy_orders = false;
};

struct TraceExhaustResult {
  int64_t visited = 0;  // valid traces (every prefix of every schedule)
  int64_t judged = 0;   // those in the profile whose every request finished, judged (once per completion order)
  int64_t late_orders = 0;  // of the judged, those with some copy landing late (copy_orders)
  std::optional<Trace> counterexample;
  std::string detail;
};

// Bounds outside [1, 3] requests, [1, 5] steps, [1, 3] prompt tokens or [1, 3] outputs are an error
// naming the bound (the space grows fast).
Result<TraceExhaustResult> exhaust_traces(const TraceImplementation& impl, Profile profile, const TraceSpaceBounds& bounds);

}  // namespace r3
