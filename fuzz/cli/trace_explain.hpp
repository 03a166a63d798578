// `explain` for a trace: the trace as a reader wants it, one fixed-width text. A header line (the
// engine, the profile, dp and tp, the model, the config and the knobs), the requests, then the
// timeline, one line per step; with a judgement, each request's expected routes beside what it
// returned, and the verdict.
//
// Notation (every table pads its columns to the widest cell; numbers are right-aligned):
//   rN             request N.
//   rows           a step's rows on one DP rank, in batch order, as runs of consecutive positions
//                  of one request: "r0:0-3" (positions 0 to 3), "r0:5" (one position);
//                  "r0:6-7x" rejected drafts (forwarded, never kept); "r0:7~" a lagging row (the
//                  extra decode of a request that finished, under overlap); "-" no rows.
//   events         before the step's forward: "hit r1 len 4", "preempt r0", "abort r0",
//                  "weight v1" ("weight v1 flush"), "offload r0", "restore r0", "pd_handoff r0".
//   end            "done r0 r2": their result processing at this step finishes them;
//                  "aborted r3": an abort event ended it before this step's forward.
//   v              the weight version the step's forward runs at.
//   requests       P prompt tokens, outputs listed, start s = min(start_len, S - 1), S = P + kept
//                  outputs, rows = the expected row count (S - 1 - s; "-" when the request returns
//                  nothing); tokens "prompt | outputs".
//   routes         a request's rows as runs: "r0:0-3@v0" the routes of request 0 at positions 0
//                  to 3 computed at weight version 0 (a route named by its source: request 1's
//                  prefix hit on request 0's forward reads "r0:0-3@v0"); "draft r0:6-7" rejected
//                  draft rows; "pad" a padding row, "zero" a row nobody wrote ("pad*3": three).
//                  "first difference at position p" names the first position whose returned row
//                  is not the expected route (same prefix, same version), or is missing or extra.
#pragma once

#include <string>

#include "fuzz/oracle/judge_trace.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

// `timeline` is build_timeline(t)'s; `judged`, when given, judge_trace's on the same trace.
std::string explain_trace_text(const Trace& t, const Timeline& timeline, const TraceJudgement* judged);

}  // namespace r3
