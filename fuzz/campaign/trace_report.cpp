#include "fuzz/campaign/trace_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "fuzz/campaign/report.hpp"
#include "fuzz/export/trace_target.hpp"
#include "fuzz/io/terminal_text.hpp"

namespace r3 {
namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : ", ") + terminal_safe(w);
  return text;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string budget_text(const TraceCampaignOptions& o) {
  std::string text;
  if (o.max_traces) text += std::to_string(*o.max_traces) + " traces";
  if (o.max_seconds) text += (text.empty() ? "" : " or ") + fixed(*o.max_seconds, 0) + " s";
  return text;
}

std::string table(const TraceCampaignReport& r) {
  if (r.findings.empty()) return "no trace findings\n";
  std::vector<std::vector<std::string>> rows = {{"#", "severity", "verdict", "implementations", "traces", "reproducer"}};
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const TraceFinding& f = r.findings[i];
    rows.push_back({std::to_string(i + 1), std::string(to_string(severity_of(f.verdict))), std::string(to_string(f.verdict)),
                    joined(f.implementations), std::to_string(f.traces),
                    f.file.empty() ? "(not written: --out is off)" : terminal_safe(f.file)});
  }
  return std::to_string(r.findings.size()) + " trace finding" + (r.findings.size() == 1 ? "" : "s") +
         " (one per bug) under profile " + std::string(to_string(r.options.profile)) + ":\n" + aligned_table(rows);
}

}  // namespace

std::string summarize_trace(const Trace& t) {
  std::map<std::string, int64_t> work;
  std::map<std::string, int64_t> events;
  for (const TraceStep& s : t.steps) {
    for (const Work& w : s.run) work[std::string(to_string(w.kind))] += w.kind == Work::Kind::extend ? w.hi - w.lo : 1;
    for (const TraceEvent& e : s.events) ++events[std::string(to_string(e.kind))];
  }
  std::string out = std::to_string(t.requests.size()) + (t.requests.size() == 1 ? " request, " : " requests, ") +
                    std::to_string(t.steps.size()) + (t.steps.size() == 1 ? " step" : " steps") + ", dp " +
                    std::to_string(t.dp) + ", tp " + std::to_string(t.tp);
  std::string rows;
  for (const auto& [kind, n] : work) rows += (rows.empty() ? "" : ", ") + kind + " " + std::to_string(n);
  if (!rows.empty()) out += ": " + rows;
  std::string named;
  for (const auto& [kind, n] : events) named += (named.empty() ? "" : ", ") + kind + (n > 1 ? " x" + std::to_string(n) : "");
  if (!named.empty()) out += "; events " + named;
  return out;
}

std::string trace_export_text(const std::string& program, const std::string& file, const Trace& t) {
  if (file.empty()) return export_command_text(program, file);
  if (const std::optional<std::string> why = trace_export_refusal(t)) return "(none: " + *why + ")";
  return export_command_text(program, file);
}

std::string trace_report_text(const TraceCampaignReport& r, bool with_timing) {
  std::string out = table(r);
  out += "r3fuzz run --traces: seed " + std::to_string(r.options.seed) + ", budget " + budget_text(r.options) +
         ", implementations " + joined(r.implementations) + "\n";
  out += std::to_string(r.traces) + " traces" + (r.interrupted ? " (interrupted)" : "") +
         (r.internal_error ? " (stopped by an internal error)" : "") + ", " + std::to_string(r.steps) + " steps\n";
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const TraceFinding& f = r.findings[i];
    out += "  finding " + std::to_string(i + 1) + ": " + std::string(to_string(f.verdict)) + " (" +
           std::string(to_string(severity_of(f.verdict))) + ") in " + joined(f.implementations) + "\n";
    out += "      " + terminal_safe(f.detail) + "\n";
    if (!f.cause.empty())
      out += "      root cause: " + f.cause +
             (f.cause.rfind("step-capture", 0) == 0
                  ? " (the per-step capture, and the per-step fix's patch that repairs it: see the case campaign's findings)\n"
                  : " (the patch of the fixed model that repairs it)\n");
    out += "      first: trace #" + std::to_string(f.first_trace) + " of seed " + std::to_string(r.options.seed) + "\n";
    out += "      reproducer: " + summarize_trace(f.reproducer) + "\n";
    out += "      replay: " + terminal_safe(replay_command(r.options.program, f.file)) + "\n";
    out += "      export: " + terminal_safe(trace_export_text(r.options.program, f.file, f.reproducer)) + "\n";
  }
  if (r.invalid_draws > 0)
    out += std::to_string(r.invalid_draws) + " drawn traces were invalid (a generator bug); the first: " +
           terminal_safe(r.first_invalid) + "\n";
  if (with_timing) {
    out += "timing: " + fixed(r.elapsed_seconds, 3) + " s, " +
           fixed(r.elapsed_seconds > 0 ? r.traces / r.elapsed_seconds : 0.0, 0) + " traces/s, " +
           fixed(r.elapsed_seconds > 0 ? r.steps / r.elapsed_seconds : 0.0, 0) + " steps/s\n";
    for (size_t i = 0; i < r.findings.size(); ++i)
      out += "  finding " + std::to_string(i + 1) + " first seen after " + fixed(r.first_seconds[i], 3) + " s\n";
  }
  if (r.internal_error) {
    out += "internal error at " + terminal_safe(*r.internal_error) +
           " (a bug in r3fuzz, or out of memory): this report covers the traces before it\n";
  }
  out += "result: " + std::to_string(r.findings.size()) + " trace finding" + (r.findings.size() == 1 ? "" : "s") + " in " +
         std::to_string(r.traces) + " traces (seed " + std::to_string(r.options.seed) + ", profile " +
         std::string(to_string(r.options.profile)) + ")\n";
  return out;
}

nlohmann::json trace_report_json(const TraceCampaignReport& r, bool with_timing) {
  nlohmann::json findings = nlohmann::json::array();
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const TraceFinding& f = r.findings[i];
    nlohmann::json item = {{"verdict", to_string(f.verdict)},
                           {"severity", to_string(severity_of(f.verdict))},
                           {"implementations", f.implementations},
                           {"traces", f.traces},
                           {"first_trace", f.first_trace},
                           {"root_cause", f.cause},
                           {"detail", f.detail},
                           {"reproducer", summarize_trace(f.reproducer)},
                           {"file", f.file},
                           {"replay", replay_command(r.options.program, f.file)},
                           {"export", trace_export_text(r.options.program, f.file, f.reproducer)}};
    if (with_timing) item["first_seconds"] = r.first_seconds[i];
    findings.push_back(std::move(item));
  }
  nlohmann::json out = {{"mode", "traces"},
                        {"seed", r.options.seed},
                        {"profile", to_string(r.options.profile)},
                        {"implementations", r.implementations},
                        {"traces", r.traces},
                        {"steps", r.steps},
                        {"interrupted", r.interrupted},
                        {"internal_error", r.internal_error ? nlohmann::json(*r.internal_error) : nlohmann::json(nullptr)},
                        {"invalid_draws", r.invalid_draws},
                        {"findings", std::move(findings)},
                        {"exit_code", r.exit_code()}};
  if (with_timing) out["elapsed_seconds"] = r.elapsed_seconds;
  return out;
}

JunitSuite junit_of_trace_run(const TraceCampaignReport& r) {
  JunitSuite suite{"r3fuzz run --traces", {}};
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const TraceFinding& f = r.findings[i];
    JunitCase c{"r3fuzz.traces." + f.implementations.front(),
                "finding " + std::to_string(i + 1) + ": " + std::string(to_string(f.verdict)),
                f.detail, std::nullopt,
                "implementations: " + joined(f.implementations) + "\nroot cause: " + f.cause +
                    "\nreproducer: " + summarize_trace(f.reproducer) + "\nreplay: " + replay_command(r.options.program, f.file)};
    suite.cases.push_back(std::move(c));
  }
  for (const std::string& impl : r.implementations) {
    const bool clean = std::none_of(r.findings.begin(), r.findings.end(), [&](const TraceFinding& f) {
      return std::find(f.implementations.begin(), f.implementations.end(), impl) != f.implementations.end();
    });
    if (clean) suite.cases.push_back({"r3fuzz.traces." + impl, "no trace findings", std::nullopt, std::nullopt, ""});
  }
  if (r.invalid_draws > 0)
    suite.cases.push_back({"r3fuzz.traces.generator", "valid draws", std::nullopt, r.first_invalid, ""});
  return suite;
}

}  // namespace r3
