#include "fuzz/mutants/report.hpp"

#include <cstdio>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/exhaust/engine_exhaust.hpp"

namespace r3 {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string seconds_text(double s) { return s < 0.001 ? fixed(s * 1e6, 0) + "us" : s < 1 ? fixed(s * 1e3, 1) + "ms" : fixed(s, 2) + "s"; }

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// One-line JSON of a case, for tables.
std::string case_line(const Case& c) { return case_to_json(c).dump(); }

std::string cases_cell(const MutantResult& r) {
  auto stats = kill_stats(r);
  if (!stats) return "-";
  return fixed(stats->median_cases, 0) + " / " + fixed(stats->worst_cases, 0);
}

std::string seconds_cell(const MutantResult& r) {
  auto stats = kill_stats(r);
  if (!stats) return "-";
  return seconds_text(stats->median_seconds) + " / " + seconds_text(stats->worst_seconds);
}

std::string kills_cell(const MutantResult& r) {
  if (r.status == MutantStatus::unavailable) return "-";
  return std::to_string(r.kills()) + "/" + std::to_string(r.hunts.size());
}

// The equivalence bounds the reports name: the options' own, else the default engine's (the
// label the matrix has always had; each carrier's engine searches its own).
ExhaustBounds shown_equivalence_bounds(const MutantsOptions& o) {
  if (o.equivalence_bounds) return *o.equivalence_bounds;
  const EngineExhaust* space = engine_exhaust(Engine{});
  return space ? space->equivalence_bounds() : ExhaustBounds{};
}

std::string settings(const MutantsOptions& o) {
  // The equivalence search runs under --profile (measure_mutant sets it): the label says so.
  ExhaustBounds bounds = shown_equivalence_bounds(o);
  bounds.profile = o.profile;
  return std::to_string(o.seeds) + " seeds from " + std::to_string(o.first_seed) + ", at most " +
         std::to_string(o.max_cases) + " generated cases per seed; equivalence by exhaust " + describe(bounds);
}

}  // namespace

double MutantsSummary::kill_rate() const {
  const int contestable = measured - equivalent;
  return contestable == 0 ? 1.0 : static_cast<double>(killed) / contestable;
}

MutantsSummary summarize(const std::vector<MutantResult>& rows) {
  MutantsSummary s;
  for (const MutantResult& r : rows) {
    if (r.status == MutantStatus::unavailable) continue;
    ++s.measured;
    if (r.status == MutantStatus::killed) ++s.killed;
    if (r.status == MutantStatus::equivalent) ++s.equivalent;
    if (r.status == MutantStatus::survived) ++s.survived;
  }
  return s;
}

std::string mutants_text(const std::vector<MutantResult>& rows, const MutantsOptions& options) {
  std::string out = "mutants: " + settings(options) + "\n\n";
  out += pad("fault", 23) + pad("carrier", 18) + pad("status", 12) + pad("kills", 7) + pad("cases med/worst", 18) +
         pad("time med/worst", 22) + "signature\n";
  for (const MutantResult& r : rows) {
    out += pad(r.fault, 23) + pad(r.carrier, 18) + pad(std::string(to_string(r.status)), 12) + pad(kills_cell(r), 7) +
           pad(cases_cell(r), 18) + pad(seconds_cell(r), 22) + (r.signature.empty() ? "-" : r.signature) + "\n";
  }
  out += "\n";
  for (const MutantResult& r : rows) {
    if (r.status == MutantStatus::killed) {
      const Case& shown = r.shrunk ? *r.shrunk : *r.detected;
      out += r.fault + " in " + r.carrier + (r.shrunk ? " (shrunk): " : ": ") + case_line(shown) + "\n  " +
             r.difference + "\n";
    } else {
      out += r.fault + " in " + r.carrier + ": " + std::string(to_string(r.status)) + ": " + r.note + "\n";
      if (r.status == MutantStatus::survived && r.detected) out += "  " + case_line(*r.detected) + "\n";
    }
  }
  const MutantsSummary s = summarize(rows);
  out += "\n" + std::to_string(s.killed) + " killed, " + std::to_string(s.equivalent) + " equivalent, " +
         std::to_string(s.survived) + " survived of " + std::to_string(s.measured) + " measured; kill rate " +
         (s.has_kill_rate() ? fixed(100 * s.kill_rate(), 1) + "% of non-equivalent mutants\n"
                            : std::string("n/a (no non-equivalent mutant was measured)\n"));
  return out;
}

nlohmann::json mutants_json(const std::vector<MutantResult>& rows, const MutantsOptions& options) {
  nlohmann::json doc;
  doc["settings"] = {{"seeds", options.seeds},
                     {"first_seed", options.first_seed},
                     {"max_cases", options.max_cases},
                     {"equivalence_bounds", describe(shown_equivalence_bounds(options))}};
  doc["mutants"] = nlohmann::json::array();
  for (const MutantResult& r : rows) {
    nlohmann::json row{{"fault", r.fault},        {"carrier", r.carrier}, {"mutant", r.mutant},
                       {"status", to_string(r.status)}, {"kills", r.kills()}, {"note", r.note},
                       {"signature", r.signature}, {"difference", r.difference}};
    row["hunts"] = nlohmann::json::array();
    for (const SeedHunt& h : r.hunts)
      row["hunts"].push_back({{"seed", h.seed}, {"killed", h.killed}, {"cases", h.cases}, {"seconds", h.seconds}});
    if (auto stats = kill_stats(r)) {
      row["cases"] = {{"median", stats->median_cases}, {"worst", stats->worst_cases}};
      row["seconds"] = {{"median", stats->median_seconds}, {"worst", stats->worst_seconds}};
    }
    row["detected"] = r.detected ? case_to_json(*r.detected) : nlohmann::json(nullptr);
    row["shrunk"] = r.shrunk ? case_to_json(*r.shrunk) : nlohmann::json(nullptr);
    doc["mutants"].push_back(std::move(row));
  }
  const MutantsSummary s = summarize(rows);
  doc["summary"] = {{"measured", s.measured}, {"killed", s.killed},       {"equivalent", s.equivalent},
                    {"survived", s.survived},
                    {"kill_rate", s.has_kill_rate() ? nlohmann::json(s.kill_rate()) : nlohmann::json(nullptr)}};
  return doc;
}

std::string mutants_markdown(const std::vector<MutantResult>& rows, const MutantsOptions& options) {
  std::string out = "Settings: " + settings(options) + ".\n\n";
  out += "| fault | carrier | status | kills | cases median / worst | time median / worst | signature |\n";
  out += "|---|---|---|---|---|---|---|\n";
  for (const MutantResult& r : rows) {
    out += "| " + r.fault + " | " + r.carrier + " | " + std::string(to_string(r.status)) + " | " + kills_cell(r) + " | " +
           cases_cell(r) + " | " + seconds_cell(r) + " | " + (r.signature.empty() ? "-" : "`" + r.signature + "`") +
           " |\n";
  }
  out += "\nShrunk counterexamples and equivalence evidence:\n\n";
  for (const MutantResult& r : rows) {
    if (r.status == MutantStatus::killed) {
      const Case& shown = r.shrunk ? *r.shrunk : *r.detected;
      out += "- **" + r.fault + "** in " + r.carrier + ": `" + case_line(shown) + "`: " + r.difference + "\n";
    } else {
      out += "- **" + r.fault + "** in " + r.carrier + ": " + std::string(to_string(r.status)) + ": " + r.note + "\n";
    }
  }
  const MutantsSummary s = summarize(rows);
  out += "\nKill rate: " + std::to_string(s.killed) + " of " + std::to_string(s.measured - s.equivalent) +
         " non-equivalent mutants (" + (s.has_kill_rate() ? fixed(100 * s.kill_rate(), 1) + "%" : std::string("n/a")) +
         "); " + std::to_string(s.equivalent) +
         " equivalent, " + std::to_string(s.survived) + " survived.\n";
  return out;
}

}  // namespace r3
