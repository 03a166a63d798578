#include "fuzz/campaign/report.hpp"

#include <cstdio>

#include "fuzz/campaign/shell_quote.hpp"

namespace r3 {
namespace {

std::string counts_text(const std::map<std::string, int64_t>& counts) {
  std::string text;
  for (const auto& [key, n] : counts) text += (text.empty() ? "" : ", ") + key + " " + std::to_string(n);
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

std::string replay_command(const Finding& f) {
  return f.file.empty() ? std::string("(not written: --out is off)") : "r3fuzz replay " + shell_quote(f.file);
}

std::string report_text(const CampaignReport& r, bool with_timing) {
  const Distribution& d = r.distribution;
  std::string impls;
  for (const std::string& name : r.implementations) impls += (impls.empty() ? "" : ", ") + name;
  std::string out = "r3fuzz run: seed " + std::to_string(r.options.seed) + ", mode " +
                    std::string(to_string(r.options.mode)) + ", budget " + budget_text(r.options) +
                    ", implementations " + impls + "\n";
  out += std::to_string(r.cases) + " cases" + (r.interrupted ? " (interrupted)" : "") + "; judgements: " +
         counts_text(d.judged) + "\n";
  out += "  by path:    " + counts_text(d.path) + "\n";
  out += "  by padding: " + counts_text(d.padding) + "\n";
  out += "  by sp:      " + counts_text(d.sp) + "\n";
  out += "  by size:    " + counts_text(d.size) + "\n";
  out += "  by calls:   " + counts_text(d.calls) + "\n";
  for (const auto& [impl, counts] : d.branch) out += "  branches of " + impl + ": " + counts_text(counts) + "\n";
  for (const auto& [impl, counts] : d.verdict) out += "  verdicts of " + impl + ": " + counts_text(counts) + "\n";
  int failing = 0, latent = 0;
  for (const Finding& f : r.findings) (f.severity == Severity::latent ? latent : failing)++;
  out += std::to_string(r.findings.size()) + " unique failure" + (r.findings.size() == 1 ? "" : "s") +
         (r.findings.empty() ? "\n" : ":\n");
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    out += "  [" + std::to_string(i + 1) + "] " + f.signature.text() + " (" + std::string(to_string(f.severity)) +
           ", " + std::to_string(f.occurrences) + " case" + (f.occurrences == 1 ? "" : "s") + ")\n";
    out += "      " + f.detail + "\n";
    out += "      first: case #" + std::to_string(f.case_index) + " of seed " + std::to_string(r.options.seed) +
           ", judged " + std::string(to_string(f.judged_as)) + "\n";
    out += "      replay: " + replay_command(f) + "\n";
  }
  if (with_timing) {
    const double secs = r.timing.elapsed_seconds;
    out += "timing: " + fixed(secs, 3) + " s, " + fixed(secs > 0 ? r.cases / secs : 0.0, 0) + " cases/s\n";
    for (const auto& [impl, s] : r.timing.first_failure_seconds)
      out += "  first failure of " + impl + " after " + fixed(s, 6) + " s (" +
             std::to_string(r.timing.first_failure_cases.at(impl)) + " cases)\n";
  }
  out += "result: " + std::to_string(failing) + " failing and " + std::to_string(latent) + " latent signature" +
         (failing + latent == 1 ? "" : "s") + " in " + std::to_string(r.cases) + " cases (seed " +
         std::to_string(r.options.seed) + "): exit " + std::to_string(r.exit_code()) + "\n";
  return out;
}

nlohmann::json report_json(const CampaignReport& r, bool with_timing) {
  using nlohmann::json;
  const Distribution& d = r.distribution;
  json budget = json::object();
  if (r.options.max_cases) budget["cases"] = *r.options.max_cases;
  if (r.options.max_seconds) budget["seconds"] = *r.options.max_seconds;
  json failures = json::array();
  for (const Finding& f : r.findings) {
    failures.push_back({{"signature", f.signature.text()},
                        {"impl", f.signature.impl},
                        {"verdict", std::string(to_string(f.signature.verdict))},
                        {"path", std::string(to_string(f.signature.path))},
                        {"branch", f.signature.branch},
                        {"severity", std::string(to_string(f.severity))},
                        {"detail", f.detail},
                        {"case_index", f.case_index},
                        {"judged", std::string(to_string(f.judged_as))},
                        {"occurrences", f.occurrences},
                        {"file", f.file.empty() ? json(nullptr) : json(f.file)},
                        {"replay", f.file.empty() ? json(nullptr) : json(replay_command(f))}});
  }
  json doc = {{"format", "r3fuzz-run/1"},
              {"seed", r.options.seed},
              {"mode", std::string(to_string(r.options.mode))},
              {"implementations", r.implementations},
              {"budget", budget},
              {"strict", r.options.strict},
              {"cases", r.cases},
              {"interrupted", r.interrupted},
              {"distribution",
               {{"path", d.path},
                {"padding", d.padding},
                {"sp", d.sp},
                {"size", d.size},
                {"calls", d.calls},
                {"judged", d.judged},
                {"branch", d.branch},
                {"verdict", d.verdict}}},
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
