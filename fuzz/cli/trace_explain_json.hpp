// `explain --json` for a trace: the same facts as the text (trace_explain.hpp), for a program. The
// requests as the timeline reads them (P, kept outputs, S, s, the step that finishes each, the
// expected route per position of [s, S - 1)), each step's weight version, rows per DP rank in batch
// order and the requests it finishes, and each judgement: its verdict, first difference, root cause
// and what every request returned. A route is {"kind": "route" | "draft", "req", "pos", "version"},
// or {"kind": "padding" | "never_written"}.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/oracle/judge_trace.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

struct NamedTraceJudgement {
  std::string impl;
  TraceJudgement judgement;
  std::string root_cause;  // trace_root_cause's, "" for a pass or when nothing repairs it
};

nlohmann::json explain_trace_json(const std::string& file, const Trace& t, const Timeline& timeline,
                                  const std::vector<NamedTraceJudgement>& judged);

}  // namespace r3
