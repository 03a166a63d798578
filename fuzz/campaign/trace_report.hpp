// A trace campaign's report, in the form of the case campaign's (report.hpp): the findings table
// first, one row per bug, then each finding's detail, root cause, reproducer and replay line,
// then the totals and a stable result line. --json carries the same "findings" keys, each with
// its reproducer's "file"; --junit a test case per finding.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/campaign/junit.hpp"
#include "fuzz/campaign/trace_campaign.hpp"

namespace r3 {

std::string trace_report_text(const TraceCampaignReport& report, bool with_timing);
nlohmann::json trace_report_json(const TraceCampaignReport& report, bool with_timing);
JunitSuite junit_of_trace_run(const TraceCampaignReport& report);

// "1 request, 2 steps, dp 1, tp 1: extend 4, decode 1; events hit" (the reproducer's size).
std::string summarize_trace(const Trace& t);

// What a trace's report prints after "export: ": the command that writes `t` (saved as `file`) as a
// pytest on its engine's own code, or "(none: WHY)" when the export refuses it (an engine without a
// trace export part, a finding its part cannot drive), or "(not written: --out is off)".
std::string trace_export_text(const std::string& program, const std::string& file, const Trace& t);

}  // namespace r3
