#include "fuzz/campaign/campaign_merge.hpp"

#include <filesystem>
#include <system_error>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/output_path.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

double seconds_since(CampaignMerge::Clock::time_point start) {
  return std::chrono::duration<double>(CampaignMerge::Clock::now() - start).count();
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
  c.expect = Expectation{f.implementations.front(), f.verdict, f.severity};
  std::string signatures;
  for (size_t i : f.failures) signatures += (signatures.empty() ? "" : ", ") + failures[i].signature.text();
  c.note = "finding " + std::to_string(index + 1) + " of r3fuzz run --seed " + std::to_string(options.seed) +
           " --profile " + std::string(to_string(f.profile)) + ": " + f.detail + " (signatures: " + signatures + ")";
  const std::string before = f.file;
  R3_TRY(f.file, write_under_out(options, finding_file_name(index + 1, f), c));
  // A finding whose reproducer changed verdict has a new file name: the old file is this run's
  // own, and would otherwise stand beside it as a second reproducer of the same finding.
  if (!before.empty() && before != f.file) {
    std::error_code ignored;
    std::filesystem::remove(before, ignored);
  }
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
  if (!j.failed() || signature_of(j, shrunk) != f.signature) return;
  f.c = shrunk;
  f.severity = j.severity;
  f.detail = j.detail;
  f.judged_as = *how;
}

}  // namespace

CampaignMerge::CampaignMerge(const CampaignOptions& options, const GeneratorOptions& generator,
                             const std::vector<std::unique_ptr<Implementation>>& impls, const CampaignHooks& hooks,
                             CampaignReport& report, Clock::time_point start)
    : options_(options), generator_(generator), impls_(impls), hooks_(hooks), report_(report), start_(start),
      tally_(impls.size()), grouper_(options.mode, options.generator.profile, hooks.canonical) {}

Result<bool> CampaignMerge::merge(const CaseOutcome& o) {
  if (o.error) return *o.error;
  if (!o.impls.empty() && o.impls.front().interrupted) return false;  // no implementation finished it
  ++report_.cases;
  tally_.count_case(o.keys);
  for (size_t k = 0; k < o.impls.size(); ++k) {
    const ImplOutcome& io = o.impls[k];
    if (io.interrupted) return false;
    if (!io.mode) {
      tally_.count_skipped();
      continue;
    }
    tally_.count_judgement(k, *io.mode, io.branch, io.verdict, io.severity);
    if (!io.failed) continue;
    if (io.known_failure) {
      ++report_.failures[*io.known_failure].occurrences;
    } else {
      R3_TRY_STATUS(record_failure(*impls_[k], io, o));
    }
  }
  return true;
}

Status CampaignMerge::record_failure(const Implementation& impl, const ImplOutcome& io, const CaseOutcome& o) {
  const Judgement& j = io.failing->judgement;
  const Signature& sig = io.failing->signature;
  if (auto it = seen_.find(sig); it != seen_.end()) {
    ++report_.failures[it->second].occurrences;
    return ok_status();
  }
  const std::string& name = j.impl;
  if (!report_.timing.first_failure_seconds.count(name)) {
    report_.timing.first_failure_seconds[name] = seconds_since(start_);
    report_.timing.first_failure_cases[name] = report_.cases;
  }
  Failure f;
  f.signature = sig;
  f.severity = j.severity;
  f.detail = j.detail;
  f.case_index = o.index;
  f.judged_as = *io.mode;
  f.c = generate_case(options_.seed, o.index, generator_).c;  // the outcome does not hold it (case_outcome.hpp)
  if (hooks_.shrink) adopt_shrunk(hooks_.shrink(f.c, impl, sig), impl, options_.mode, f);
  f.c.expect = Expectation{name, j.verdict, f.severity};
  f.c.note = "found by r3fuzz run --seed " + std::to_string(options_.seed) + " (case #" + std::to_string(o.index) +
             ", judged " + std::string(to_string(f.judged_as)) + "): " + f.detail;
  R3_TRY(f.file, write_under_out(options_, finding_file_name(f.signature), f.c));
  // The failure's finding: a new one is written at once, like the failure itself.
  Judgement on_shrunk = j;
  on_shrunk.severity = f.severity;
  on_shrunk.detail = f.detail;
  const FindingGrouper::Placement placed = grouper_.place(report_.failures.size(), impl, on_shrunk, f.c);
  f.finding = placed.finding;
  seen_.emplace(sig, report_.failures.size());
  published_.add(sig, report_.failures.size());
  report_.failures.push_back(std::move(f));
  if (placed.created || placed.reproducer_changed) {
    R3_TRY_STATUS(write_finding(options_, report_.failures, placed.finding, grouper_.findings()[placed.finding]));
  }
  return ok_status();
}

Status CampaignMerge::finish() {
  report_.distribution = tally_.distribution(report_.implementations);
  report_.findings = std::move(grouper_.findings());
  for (size_t i = 0; i < report_.findings.size(); ++i) {
    R3_TRY_STATUS(write_finding(options_, report_.failures, i, report_.findings[i]));
  }
  return ok_status();
}

}  // namespace r3
