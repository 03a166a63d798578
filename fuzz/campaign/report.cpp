#include "fuzz/campaign/report.hpp"

#include <algorithm>
#include <cstdio>

#include "reference/case_measure.hpp"
#include "fuzz/campaign/shell_quote.hpp"
#include "fuzz/io/terminal_text.hpp"

namespace r3 {
namespace {

std::string counts_text(const std::map<std::string, int64_t>& counts) {
  std::string text;
  // Keys are branch names an adapter chose: data, escaped like every text the report takes from it.
  for (const auto& [key, n] : counts) text += (text.empty() ? "" : ", ") + terminal_safe(key) + " " + std::to_string(n);
  return text.empty() ? "none" : text;
}

std::string budget_text(const CampaignOptions& o) {
  std::string text;
  if (o.max_cases) text += std::to_string(*o.max_cases) + " cases";
  if (o.max_seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", *o.max_seconds);
    text += (text.empty() ? "" : " or ") + std::string(buf);
  }
  return text;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

std::string aligned_table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return {};
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      line += " " + row[c];
      if (c + 1 < row.size() && c < width.size()) line += std::string(width[c] - row[c].size() + 1, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string replay_command(const std::string& program, const std::string& file) {
  return file.empty() ? std::string("(not written: --out is off)") : program + " replay " + shell_quote(file);
}

std::string export_command_text(const std::string& program, const std::string& file) {
  return file.empty() ? std::string("(not written: --out is off)")
                      : program + " export " + shell_quote(file) + " --pytest";
}

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : ", ") + terminal_safe(w);
  return text;
}

std::vector<std::string> signatures_of(const CampaignReport& r, const Finding& f) {
  std::vector<std::string> out;
  for (size_t i : f.failures) out.push_back(r.failures[i].signature.text());
  return out;
}

// The findings first, as a table a reader scans: one row per bug.
std::string findings_table(const CampaignReport& r) {
  if (r.findings.empty()) return "no findings\n";
  std::vector<std::vector<std::string>> rows = {{"#", "severity", "verdict", "implementations", "cases", "reproducer"}};
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    rows.push_back({std::to_string(i + 1), std::string(to_string(f.severity)), std::string(to_string(f.verdict)),
                    joined(f.implementations), std::to_string(r.occurrences(f)),
                    f.file.empty() ? "(not written: --out is off)" : terminal_safe(f.file)});
  }
  return std::to_string(r.findings.size()) + " finding" + (r.findings.size() == 1 ? "" : "s") +
         " (one per bug) under profile " + std::string(to_string(r.options.generator.profile)) + ":\n" +
         aligned_table(rows);
}

std::string finding_details(const CampaignReport& r) {
  std::string out;
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    out += "  finding " + std::to_string(i + 1) + ": " + std::string(to_string(f.verdict)) + " (" +
           std::string(to_string(f.severity)) + ") in " + joined(f.implementations) + "\n";
    out += "      " + terminal_safe(f.detail) + "\n";
    out += "      signatures: " + joined(signatures_of(r, f)) + "\n";
    if (!f.cause.empty()) out += "      root cause: " + f.cause + " (the patch of the proposed fix that repairs it)\n";
    out += "      reproducer: " + summarize(f.reproducer) + "\n";
    out += "      replay: " + terminal_safe(replay_command(r.options.program, f.file)) + "\n";
    out += "      export: " + terminal_safe(export_command_text(r.options.program, f.file)) + "\n";
  }
  return out;
}

}  // namespace

std::string report_text(const CampaignReport& r, bool with_timing) {
  const Distribution& d = r.distribution;
  std::string impls;
  for (const std::string& name : r.implementations) impls += (impls.empty() ? "" : ", ") + terminal_safe(name);
  std::string out = "r3fuzz run: seed " + std::to_string(r.options.seed) + ", mode " +
                    std::string(to_string(r.options.mode)) + ", budget " + budget_text(r.options) +
                    ", implementations " + impls + "\n";
  out += std::to_string(r.cases) + " cases" + (r.interrupted ? " (interrupted)" : "") +
         (r.internal_error ? " (stopped by an internal error)" : "") + "; judgements: " + counts_text(d.judged) + "\n";
  out += "  by path:    " + counts_text(d.path) + "\n";
  out += "  by padding: " + counts_text(d.padding) + "\n";
  out += "  by sp:      " + counts_text(d.sp) + "\n";
  out += "  by size:    " + counts_text(d.size) + "\n";
  out += "  by calls:   " + counts_text(d.calls) + "\n";
  for (const auto& [impl, counts] : d.branch) out += "  branches of " + terminal_safe(impl) + ": " + counts_text(counts) + "\n";
  for (const auto& [impl, counts] : d.verdict) out += "  verdicts of " + terminal_safe(impl) + ": " + counts_text(counts) + "\n";
  int failing = 0, latent = 0;
  for (const Failure& f : r.failures) (f.severity == Severity::latent ? latent : failing)++;
  int failing_findings = 0, latent_findings = 0;
  for (const Finding& f : r.findings) (f.severity == Severity::latent ? latent_findings : failing_findings)++;
  out = findings_table(r) + out + finding_details(r);
  out += std::to_string(r.failures.size()) + " unique failure signature" + (r.failures.size() == 1 ? "" : "s") +
         (r.failures.empty() ? "\n" : ":\n");
  for (size_t i = 0; i < r.failures.size(); ++i) {
    const Failure& f = r.failures[i];
    out += "  [" + std::to_string(i + 1) + "] " + terminal_safe(f.signature.text()) + " (" + std::string(to_string(f.severity)) +
           ", " + std::to_string(f.occurrences) + " case" + (f.occurrences == 1 ? "" : "s") + ")\n";
    out += "      " + terminal_safe(f.detail) + "\n";
    out += "      first: case #" + std::to_string(f.case_index) + " of seed " + std::to_string(r.options.seed) +
           ", judged " + std::string(to_string(f.judged_as)) + "\n";
    out += "      finding " + std::to_string(f.finding + 1) +
           "; replay: " + terminal_safe(replay_command(r.options.program, f.file)) + "\n";
    out += "      export: " + terminal_safe(export_command_text(r.options.program, f.file)) + "\n";
  }
  if (with_timing) {
    const double secs = r.timing.elapsed_seconds;
    out += "timing: " + fixed(secs, 3) + " s, " + fixed(secs > 0 ? r.cases / secs : 0.0, 0) + " cases/s\n";
    for (const auto& [impl, s] : r.timing.first_failure_seconds)
      out += "  first failure of " + terminal_safe(impl) + " after " + fixed(s, 6) + " s (" +
             std::to_string(r.timing.first_failure_cases.at(impl)) + " cases)\n";
  }
  if (r.internal_error) {
    out += "internal error at " + terminal_safe(*r.internal_error) +
           " (a bug in r3fuzz, or out of memory): this report covers the cases before it\n";
  }
  out += "result: " + std::to_string(failing_findings) + " failing and " + std::to_string(latent_findings) +
         " latent finding" + (failing_findings + latent_findings == 1 ? "" : "s") + " (" + std::to_string(failing) +
         " failing and " + std::to_string(latent) + " latent signature" + (failing + latent == 1 ? "" : "s") + ") in " +
         std::to_string(r.cases) + " cases (seed " + std::to_string(r.options.seed) + ", profile " +
         std::string(to_string(r.options.generator.profile)) + "): exit " + std::to_string(r.exit_code()) + "\n";
  return out;
}

nlohmann::json report_json(const CampaignReport& r, bool with_timing) {
  using nlohmann::json;
  const Distribution& d = r.distribution;
  const std::string& program = r.options.program;
  json budget = json::object();
  if (r.options.max_cases) budget["cases"] = *r.options.max_cases;
  if (r.options.max_seconds) budget["seconds"] = *r.options.max_seconds;
  json findings = json::array();
  for (const Finding& f : r.findings) {
    findings.push_back({{"severity", std::string(to_string(f.severity))},
                        {"verdict", std::string(to_string(f.verdict))},
                        {"implementations", f.implementations},
                        {"signatures", signatures_of(r, f)},
                        {"occurrences", r.occurrences(f)},
                        {"profile", std::string(to_string(f.profile))},
                        {"detail", f.detail},
                        {"file", f.file.empty() ? json(nullptr) : json(f.file)},
                        {"replay", f.file.empty() ? json(nullptr) : json(replay_command(program, f.file))},
                        {"export", f.file.empty() ? json(nullptr) : json(export_command_text(program, f.file))}});
    if (!f.cause.empty()) findings.back()["cause"] = f.cause;
  }
  json failures = json::array();
  for (const Failure& f : r.failures) {
    failures.push_back({{"signature", f.signature.text()},
                        {"impl", f.signature.impl},
                        {"verdict", std::string(to_string(f.signature.verdict))},
                        {"path", f.signature.path_text()},
                        {"branch", f.signature.branch},
                        {"severity", std::string(to_string(f.severity))},
                        {"detail", f.detail},
                        {"case_index", f.case_index},
                        {"judged", std::string(to_string(f.judged_as))},
                        {"occurrences", f.occurrences},
                        {"finding", f.finding + 1},
                        {"file", f.file.empty() ? json(nullptr) : json(f.file)},
                        {"replay", f.file.empty() ? json(nullptr) : json(replay_command(program, f.file))},
                        {"export", f.file.empty() ? json(nullptr) : json(export_command_text(program, f.file))}});
  }
  json doc = {{"format", "r3fuzz-run/1"},
              {"seed", r.options.seed},
              {"mode", std::string(to_string(r.options.mode))},
              {"implementations", r.implementations},
              {"budget", budget},
              {"strict", r.options.strict},
              {"cases", r.cases},
              {"interrupted", r.interrupted},
              {"internal_error", r.internal_error ? json(*r.internal_error) : json(nullptr)},
              {"distribution",
               {{"path", d.path},
                {"padding", d.padding},
                {"sp", d.sp},
                {"size", d.size},
                {"calls", d.calls},
                {"judged", d.judged},
                {"branch", d.branch},
                {"verdict", d.verdict}}},
              {"profile", std::string(to_string(r.options.generator.profile))},
              {"findings", findings},
              {"failures", failures},
              {"exit_code", r.exit_code()}};
  if (with_timing) {
    const double secs = r.timing.elapsed_seconds;
    doc["timing"] = {{"elapsed_seconds", secs},
                     {"cases_per_second", secs > 0 ? r.cases / secs : 0.0},
                     {"first_failure_seconds", r.timing.first_failure_seconds},
                     {"first_failure_cases", r.timing.first_failure_cases}};
  }
  return doc;
}

}  // namespace r3
