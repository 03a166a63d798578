#include "fuzz/campaign/campaign.hpp"


#include <cctype>
#include <chrono>
#include <filesystem>
#include <system_error>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/output_path.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3 {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string verdict_key(const Judgement& j) {
  std::string key(to_string(j.verdict));
  if (j.severity != Severity::none) key += " (" + std::string(to_string(j.severity)) + ")";
  return key;
}

// `delta` -1 takes back a case a signal cut short (a count back at 0 leaves the report).
void count_case(Distribution& d, const GeneratedCase& g, int delta = 1) {
  const Case& c = g.c;
  auto add = [delta](std::map<std::string, int64_t>& counts, std::string key) {
    if ((counts[key] += delta) == 0) counts.erase(key);
  };
  add(d.path, std::string(to_string(c.path)));
  add(d.padding, std::string(to_string(c.padding.mode)));
  add(d.sp, c.topology.sp ? "on" : "off");
  add(d.size, std::string(to_string(g.size)));
  add(d.calls, c.microbatches > 1 ? "microbatches" : c.dp_chunk ? "dp_chunk" : "one call");
}

// Writes `c` as `name` under --out; the file is complete before the campaign moves on, so a
// crash or Ctrl-C later loses nothing. Returns the path ("" when --out is off).
Result<std::string> write_under_out(const CampaignOptions& options, const std::string& name, const Case& c) {
  if (options.out_dir.empty()) return std::string();
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return Error{"--out " + options.out_dir + ": cannot create the directory: " + ec.message()};
  // The name may come from an adapter's command line: it must stay one file inside --out.
  R3_TRY(std::filesystem::path file, output_path_inside(options.out_dir, name));
  R3_TRY_STATUS(write_case_file(file.string(), c));
  return file.string();
}

// The finding's reproducer as a replayable file: "expect" names its first implementation,
// the note every implementation and signature it covers.
Status write_finding(const CampaignOptions& options, const std::vector<Failure>& failures, size_t index,
                     Finding& f) {
  Case c = f.reproducer;
  c.profile = f.profile;
  c.expect = Expectation{f.implementations.front(), std::string(to_string(f.verdict)),
                         std::string(to_string(f.severity))};
  std::string signatures;
  for (size_t i : f.failures) signatures += (signatures.empty() ? "" : ", ") + failures[i].signature.text();
  c.note = "finding " + std::to_string(index + 1) + " of r3fuzz run --seed " + std::to_string(options.seed) +
           " --profile " + std::string(to_string(f.profile)) + ": " + f.detail + " (signatures: " + signatures + ")";
  R3_TRY(f.file, write_under_out(options, finding_file_name(index + 1, f), c));
  return ok_status();
}

// Takes the shrinker's case when it still shows the same signature (the description and
// severity then come from the smaller case); otherwise keeps the case as found.
void adopt_shrunk(const Case& shrunk, const Implementation& impl, Mode mode, Failure& f) {
  Result<Step> step = derive_step(shrunk);
  if (!step.ok()) return;
  const std::optional<JudgeMode> how = choose_judge_mode(mode, impl, shrunk);
  if (!how) return;
  const Judgement j = judge_case(impl, shrunk, *step, *how);
  if (!j.failed() || signature_of(j, shrunk.path) != f.signature) return;
  f.c = shrunk;
  f.severity = j.severity;
  f.detail = j.detail;
  f.judged_as = *how;
}

}  // namespace

bool CampaignReport::failed() const {
  for (const Failure& f : failures)
    if (f.severity == Severity::failure || options.strict) return true;
  return false;
}

int64_t CampaignReport::occurrences(const Finding& f) const {
  int64_t n = 0;
  for (size_t i : f.failures) n += failures[i].occurrences;
  return n;
}

std::string finding_file_name(size_t number, const Finding& f) {
  return "finding-" + std::to_string(number) + "-" + std::string(to_string(f.verdict)) + ".json";
}

std::string finding_file_name(const Signature& signature) {
  // A name a shell takes unquoted, and short enough to create: external:COMMAND signatures carry
  // spaces, quotes and slashes, and a long command would exceed the file-name limit (issue 15).
  return file_name_from_text(signature.text(), ".json");
}

Result<CampaignReport> run_campaign(const CampaignOptions& options,
                                    const std::vector<std::unique_ptr<Implementation>>& impls,
                                    const CampaignHooks& hooks) {
  CampaignReport report;
  report.options = options;
  GeneratorOptions generator = options.generator;
  if (options.mode == Mode::concrete) {  // production layouts are too large to run concretely
    std::erase(generator.sizes, SizeClass::production);
    if (generator.sizes.empty()) return Error{"--mode concrete: production sizes run symbolically only; add tiny or small"};
  }
  for (const auto& impl : impls) report.implementations.push_back(impl->name());
  std::map<Signature, size_t> seen;  // signature -> index in report.failures
  FindingGrouper grouper(options.mode, options.generator.profile, hooks.canonical);
  const Clock::time_point start = Clock::now();
  Clock::time_point next_progress = start;
  double elapsed = 0;
  std::vector<Judgement> judgements(impls.size());  // one per implementation, reused case after case
  auto stopping = [&] { return hooks.stop && hooks.stop->load(std::memory_order_relaxed); };

  for (uint64_t index = 0;; ++index) {
    if (options.max_cases && report.cases >= *options.max_cases) break;
    if (stopping()) {
      report.interrupted = true;
      break;
    }
    // The clock is read every 64 cases: cheap at 500k cases/s, fine-grained enough for --time.
    if (index % 64 == 0) {
      const Clock::time_point now = Clock::now();
      elapsed = std::chrono::duration<double>(now - start).count();
      if (options.max_seconds && elapsed >= *options.max_seconds) break;
      if (hooks.on_progress && now >= next_progress) {
        hooks.on_progress({report.cases, seen.size(), elapsed});
        next_progress = now + std::chrono::milliseconds(250);
      }
    }
    const GeneratedCase g = generate_case(options.seed, index, generator);
    Result<Step> step = derive_step(g.c);
    if (!step.ok()) {
      return Error{"internal: the generator produced an invalid case (seed " + std::to_string(options.seed) +
                   ", case #" + std::to_string(index) + "): " + step.error().message};
    }
    if (Status inside = check_profile(g.c, generator.profile); !inside.ok()) {
      return Error{"internal: the generator left its profile (seed " + std::to_string(options.seed) + ", case #" +
                   std::to_string(index) + "): " + inside.error().message};
    }
    ++report.cases;
    count_case(report.distribution, g);
    for (const auto& impl : impls) {
      const std::optional<JudgeMode> mode = choose_judge_mode(options.mode, *impl, g.c);
      if (!mode) {
        ++report.distribution.judged["skipped"];
        continue;
      }
      // Only the reported rank's words are read here; rendering every rank's costs more than judging.
      Judgement& j = judgements[static_cast<size_t>(&impl - impls.data())];
      judge_case_into(j, *impl, g.c, *step, *mode, RankDetails::reported_ranks);
      // A signal during the judgement may have cut it short (an adapter's wait ends with an
      // "interrupted" error): the judgement says nothing about the implementation, so it is
      // neither counted nor reported, and a case no implementation finished is not counted.
      if (stopping()) {
        report.interrupted = true;
        if (&impl == &impls.front()) {
          --report.cases;
          count_case(report.distribution, g, -1);
        }
        break;
      }
      ++report.distribution.judged[std::string(to_string(*mode))];
      const std::string name = j.impl;
      ++report.distribution.branch[name][branch_taken(j)];
      ++report.distribution.verdict[name][verdict_key(j)];
      if (!j.failed()) continue;
      const Signature sig = signature_of(j, g.c.path);
      if (auto it = seen.find(sig); it != seen.end()) {
        ++report.failures[it->second].occurrences;
        continue;
      }
      if (!report.timing.first_failure_seconds.count(name)) {
        report.timing.first_failure_seconds[name] = seconds_since(start);
        report.timing.first_failure_cases[name] = report.cases;
      }
      Failure f;
      f.signature = sig;
      f.severity = j.severity;
      f.detail = j.detail;
      f.case_index = index;
      f.judged_as = *mode;
      f.c = g.c;
      if (hooks.shrink) adopt_shrunk(hooks.shrink(g.c, *impl, sig), *impl, options.mode, f);
      f.c.expect = Expectation{name, std::string(to_string(j.verdict)), std::string(to_string(f.severity))};
      f.c.note = "found by r3fuzz run --seed " + std::to_string(options.seed) + " (case #" + std::to_string(index) +
                 ", judged " + std::string(to_string(f.judged_as)) + "): " + f.detail;
      R3_TRY(f.file, write_under_out(options, finding_file_name(f.signature), f.c));
      // The failure's finding: a new one is written at once, like the failure itself.
      Judgement on_shrunk = j;
      on_shrunk.severity = f.severity;
      on_shrunk.detail = f.detail;
      const FindingGrouper::Placement placed = grouper.place(report.failures.size(), *impl, on_shrunk, f.c);
      f.finding = placed.finding;
      seen.emplace(sig, report.failures.size());
      report.failures.push_back(std::move(f));
      Finding& finding = grouper.findings()[placed.finding];
      if (placed.created) R3_TRY_STATUS(write_finding(options, report.failures, placed.finding, finding));
    }
    if (report.interrupted) break;
  }
  report.findings = std::move(grouper.findings());
  // Rewritten now that each lists every signature it gathered during the run.
  for (size_t i = 0; i < report.findings.size(); ++i) {
    R3_TRY_STATUS(write_finding(options, report.failures, i, report.findings[i]));
  }
  report.timing.elapsed_seconds = seconds_since(start);
  if (hooks.on_progress) hooks.on_progress({report.cases, seen.size(), report.timing.elapsed_seconds});
  return report;
}

}  // namespace r3
