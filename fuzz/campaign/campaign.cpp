#include "fuzz/campaign/campaign.hpp"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

#include "fuzz/campaign/case_outcome.hpp"
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

std::string verdict_key(Verdict verdict, Severity severity) {
  std::string key(to_string(verdict));
  if (severity != Severity::none) key += " (" + std::string(to_string(severity)) + ")";
  return key;
}

void count_case(Distribution& d, const GeneratedCase& g) {
  const Case& c = g.c;
  auto add = [](std::map<std::string, int64_t>& counts, std::string key) { ++counts[key]; };
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

namespace {

// Merges judged cases into the report in case order: the distribution, each new failure shrunk,
// written and placed in its finding. One thread; the workers only judge.
class CampaignMerge {
 public:
  CampaignMerge(const CampaignOptions& options, const std::vector<std::unique_ptr<Implementation>>& impls,
                const CampaignHooks& hooks, CampaignReport& report, Clock::time_point start)
      : options_(options), impls_(impls), hooks_(hooks), report_(report), start_(start),
        grouper_(options.mode, options.generator.profile, hooks.canonical) {}

  // False when a signal cut the case short: it and everything after it stay out of the report.
  Result<bool> merge(const CaseOutcome& o) {
    if (o.error) return *o.error;
    if (!o.impls.empty() && o.impls.front().interrupted) return false;  // no implementation finished it
    ++report_.cases;
    count_case(report_.distribution, o.generated);
    for (size_t k = 0; k < o.impls.size(); ++k) {
      const ImplOutcome& io = o.impls[k];
      if (io.interrupted) return false;
      if (!io.mode) {
        ++report_.distribution.judged["skipped"];
        continue;
      }
      const std::string& name = report_.implementations[k];
      ++report_.distribution.judged[std::string(to_string(*io.mode))];
      ++report_.distribution.branch[name][io.branch];
      ++report_.distribution.verdict[name][verdict_key(io.verdict, io.severity)];
      if (io.failing) R3_TRY_STATUS(record_failure(*impls_[k], *io.failing, *io.mode, o));
    }
    return true;
  }

  size_t unique_failures() const { return seen_.size(); }

  Status finish() {
    report_.findings = std::move(grouper_.findings());
    // Rewritten now that each lists every signature it gathered during the run.
    for (size_t i = 0; i < report_.findings.size(); ++i) {
      R3_TRY_STATUS(write_finding(options_, report_.failures, i, report_.findings[i]));
    }
    return ok_status();
  }

 private:
  Status record_failure(const Implementation& impl, const Judgement& j, JudgeMode mode, const CaseOutcome& o) {
    const Signature sig = signature_of(j, o.generated.c);
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
    f.judged_as = mode;
    f.c = o.generated.c;
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
    report_.failures.push_back(std::move(f));
    if (placed.created || placed.reproducer_changed) {
      R3_TRY_STATUS(write_finding(options_, report_.failures, placed.finding, grouper_.findings()[placed.finding]));
    }
    return ok_status();
  }

  const CampaignOptions& options_;
  const std::vector<std::unique_ptr<Implementation>>& impls_;
  const CampaignHooks& hooks_;
  CampaignReport& report_;
  Clock::time_point start_;
  FindingGrouper grouper_;
  std::map<Signature, size_t> seen_;  // signature -> index in report.failures
};

// One worker's implementations and judgement scratch.
struct Worker {
  std::vector<std::unique_ptr<Implementation>> owned;  // empty when the worker judges with the campaign's own
  const std::vector<std::unique_ptr<Implementation>>* impls = nullptr;
  std::vector<Judgement> judgements;
};

Result<std::vector<Worker>> make_workers(const CampaignOptions& options,
                                         const std::vector<std::unique_ptr<Implementation>>& impls,
                                         const CampaignHooks& hooks) {
  if (options.jobs < 1) return Error{"jobs: " + std::to_string(options.jobs) + " is below 1"};
  if (options.jobs > 1 && !hooks.make_impls) return Error{"internal: jobs > 1 needs CampaignHooks::make_impls"};
  std::vector<Worker> workers(static_cast<size_t>(options.jobs));
  // One worker judges with the campaign's implementations; several each make their own, because
  // the merging thread shrinks with the campaign's while they judge the next round.
  const bool own = workers.size() > 1;
  for (size_t w = 0; w < workers.size(); ++w) {
    if (own) {
      R3_TRY(workers[w].owned, hooks.make_impls());
    }
    workers[w].impls = own ? &workers[w].owned : &impls;
    workers[w].judgements.resize(impls.size());
  }
  return workers;
}

}  // namespace

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
  R3_TRY(std::vector<Worker> workers, make_workers(options, impls, hooks));
  const Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (options.max_seconds) {
    deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*options.max_seconds));
  }
  auto stopping = [&] { return hooks.stop && hooks.stop->load(std::memory_order_relaxed); };
  CampaignMerge merge(options, impls, hooks, report, start);

  // Rounds of cases: the workers judge a round's cases (each a contiguous block), then they
  // are merged in case order. With several workers the next round is judged while this thread
  // merges the last one (its shrinking and file writes included), so merging costs no worker
  // time; a round judged past the end of the run is dropped unmerged. A round grows while rounds
  // are quick, so slow implementations (external adapters) still merge, write and report progress
  // often.
  struct Round {
    std::vector<CaseOutcome> cases;
    uint64_t first = 0;  // index of its first case
    size_t count = 0;
    std::vector<std::jthread> threads;  // joined on destruction, so an early return waits for them
    Clock::time_point started;
  };
  const bool pipelined = workers.size() > 1;
  size_t round_size = workers.size();
  // Worker w judges the w-th of `jobs` contiguous blocks of the round: neighbouring cases (and
  // the heap blocks they own) stay with one thread.
  auto judge_share = [&](Round& round, size_t w) {
    const size_t begin = round.count * w / workers.size(), end = round.count * (w + 1) / workers.size();
    for (size_t i = begin; i < end; ++i) {
      round.cases[i].judged = false;
      // The clock is read every 16th case: cheap at 500k cases/s, fine-grained enough for --time.
      if (stopping() || (deadline && (i - begin) % 16 == 0 && Clock::now() >= *deadline)) {
        for (size_t rest = i; rest < end; ++rest) round.cases[rest].judged = false;
        return;
      }
      judge_case_outcome(options.seed, round.first + i, generator, options.mode, *workers[w].impls,
                         workers[w].judgements, hooks.stop, round.cases[i]);
    }
  };
  auto start_round = [&](Round& round, uint64_t first, size_t count) {
    round.first = first;
    round.count = count;
    if (round.cases.size() < count) round.cases.resize(count);
    round.started = Clock::now();
    if (!pipelined) {
      judge_share(round, 0);
      return;
    }
    for (size_t w = 0; w < workers.size(); ++w) round.threads.emplace_back([&judge_share, &round, w] { judge_share(round, w); });
  };
  auto finish_round = [&](Round& round) {
    round.threads.clear();  // joins
    if (Clock::now() - round.started < std::chrono::milliseconds(50)) round_size = std::min<size_t>(round_size * 2, 65536);
  };
  // Cases of the next round starting after `scheduled` cases: none once --cases is reached.
  auto next_count = [&](int64_t scheduled) -> size_t {
    if (stopping()) return 0;
    if (!options.max_cases) return round_size;
    return static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(round_size), *options.max_cases - scheduled));
  };
  // Merges a judged round in case order; false once the run is over.
  auto merge_round = [&](const Round& round) -> Result<bool> {
    for (size_t i = 0; i < round.count; ++i) {
      if (!round.cases[i].judged) return false;  // time ran out or a signal came: the merged prefix is the run
      R3_TRY(const bool merged, merge.merge(round.cases[i]));
      if (!merged) return false;
    }
    if (hooks.on_progress) hooks.on_progress({report.cases, merge.unique_failures(), seconds_since(start)});
    return true;
  };

  Round rounds[2];
  Round* judged = &rounds[0];
  Round* next = &rounds[1];
  start_round(*judged, 0, next_count(0));
  finish_round(*judged);
  while (judged->count > 0) {
    const uint64_t after = judged->first + judged->count;
    const size_t count = next_count(static_cast<int64_t>(after));
    if (pipelined && count > 0) start_round(*next, after, count);
    R3_TRY(const bool going_on, merge_round(*judged));
    if (!going_on) break;
    if (!pipelined && count > 0) start_round(*next, after, count);
    if (count == 0) break;
    finish_round(*next);
    std::swap(judged, next);
  }
  next->threads.clear();  // a round judged past the end of the run: wait for it, drop it
  report.interrupted = stopping();
  R3_TRY_STATUS(merge.finish());
  report.timing.elapsed_seconds = seconds_since(start);
  if (hooks.on_progress) hooks.on_progress({report.cases, merge.unique_failures(), report.timing.elapsed_seconds});
  return report;
}

}  // namespace r3
