#include "fuzz/campaign/campaign.hpp"

#include <algorithm>
#include <chrono>

#include "fuzz/campaign/campaign_merge.hpp"
#include "fuzz/campaign/case_outcome.hpp"
#include "fuzz/campaign/case_pipeline.hpp"
#include "fuzz/generate/case_domain.hpp"
#include "fuzz/io/output_path.hpp"

namespace r3 {

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

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One worker's implementations and judgement scratch, on cache lines of its own.
struct alignas(64) Worker {
  std::vector<std::unique_ptr<Implementation>> owned;  // empty when the worker judges with the campaign's own
  const std::vector<std::unique_ptr<Implementation>>* impls = nullptr;
  // Sized by the worker's own thread at its first case, so the judgements' heap is that thread's.
  std::vector<Judgement> judgements;
  std::optional<SeenSignatures::View> seen;  // made with the merge
};

Status check_jobs(const CampaignOptions& options, const CampaignHooks& hooks) {
  if (options.jobs < 1) return Error{"jobs: " + std::to_string(options.jobs) + " is below 1"};
  if (options.jobs > 1 && !hooks.make_impls) return Error{"internal: jobs > 1 needs CampaignHooks::make_impls"};
  return ok_status();
}

// The workers that started (the pipeline calls this once their threads exist), so nothing is
// made for a worker the system gave no thread. One worker judges with the campaign's
// implementations, and merges (shrinks) with them between its cases; several each make their
// own, because whichever worker merges shrinks with the campaign's while the others judge.
Status make_workers(std::vector<Worker>& workers, const PipelineWorkers& started, const CampaignOptions& options,
                    const std::vector<std::unique_ptr<Implementation>>& impls, const CampaignHooks& hooks) {
  workers = std::vector<Worker>(started.started);
  const bool own = workers.size() > 1;
  for (size_t w = 0; w < workers.size(); ++w) {
    if (own) {
      Result<std::vector<std::unique_ptr<Implementation>>> made = hooks.make_impls();
      // The campaign's own started, so this is a limit of the system's (open files, processes).
      if (!made.ok()) {
        return Error{"--jobs " + std::to_string(options.jobs) + ": worker " + std::to_string(w + 1) + " of " +
                     std::to_string(workers.size()) + ": " + made.error().message +
                     " (each worker has implementations of its own, an external adapter one process each: "
                     "lower --jobs)"};
      }
      workers[w].owned = std::move(*made);
    }
    workers[w].impls = own ? &workers[w].owned : &impls;
  }
  return ok_status();
}

// Progress reports from the merge, a few times a second.
class ProgressThrottle {
 public:
  explicit ProgressThrottle(Clock::time_point start) : last_(start) {}
  bool due() {
    const Clock::time_point now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(50)) return false;
    last_ = now;
    return true;
  }

 private:
  Clock::time_point last_;
};

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
  // An engine added without a draw part cannot feed a case campaign: say so before any worker asks.
  R3_TRY_STATUS(check_drawable(CaseDomain{generator.profile, bounds_of(SizeClass::tiny), generator.engine}));
  R3_TRY_STATUS(check_jobs(options, hooks));
  const Clock::time_point start = Clock::now();
  CampaignMerge merge(options, generator, impls, hooks, report, start);
  ProgressThrottle progress(start);

  // The workers judge cases in blocks as they come free and whichever finishes a block merges
  // what is complete, in case order (case_pipeline.hpp): the report is the same for every count.
  PipelineOptions pipeline;
  pipeline.workers = static_cast<size_t>(options.jobs);
  if (options.max_cases) pipeline.cases = static_cast<uint64_t>(std::max<int64_t>(0, *options.max_cases));
  if (options.max_seconds) {
    pipeline.time = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*options.max_seconds));
  }
  pipeline.stop = hooks.stop;
  PipelineCallbacks callbacks;
  std::vector<Worker> workers;  // made by `start`, for the workers whose threads started
  callbacks.start = [&](const PipelineWorkers& started) -> Status {
    R3_TRY_STATUS(make_workers(workers, started, options, impls, hooks));
    for (Worker& w : workers) w.seen.emplace(merge.seen());
    return ok_status();
  };
  callbacks.judge = [&](size_t w, uint64_t index, CaseOutcome& out) {
    Worker& worker = workers[w];
    if (worker.judgements.size() != impls.size()) worker.judgements.resize(impls.size());
    const CaseJudge judge{options.seed, &generator, options.mode, worker.impls, &worker.judgements, hooks.stop, &*worker.seen};
    judge_case_outcome(judge, index, out);
  };
  callbacks.merge = [&](const CaseOutcome& o) { return merge.merge(o); };
  callbacks.merged = [&] {
    if (hooks.on_progress && progress.due()) hooks.on_progress({report.cases, merge.unique_failures(), seconds_since(start)});
  };
  R3_TRY(const PipelineWorkers ran, run_case_pipeline(pipeline, callbacks));
  report.workers = ran.started;
  report.threads_refused = ran.refused;
  report.interrupted = hooks.stop && hooks.stop->load(std::memory_order_relaxed);
  report.internal_error = ran.judge_failure;
  R3_TRY_STATUS(merge.finish());
  report.timing.elapsed_seconds = seconds_since(start);
  if (hooks.on_progress) hooks.on_progress({report.cases, merge.unique_failures(), report.timing.elapsed_seconds});
  return report;
}

}  // namespace r3
