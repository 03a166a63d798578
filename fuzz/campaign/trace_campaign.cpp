#include "fuzz/campaign/trace_campaign.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "fuzz/codec/trace_json.hpp"
#include "fuzz/generate/rng.hpp"
#include "fuzz/generate/trace_generator.hpp"
#include "fuzz/io/output_path.hpp"

namespace r3 {
namespace {

using Clock = std::chrono::steady_clock;

// The seed of trace `index`: its own stream, so any worker can draw any trace.
uint64_t trace_seed(uint64_t seed, int64_t index) {
  uint64_t state = seed ^ (0x7261636574726163ull + static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull);
  return splitmix64(state);
}

// One implementation's failure on one trace.
struct TraceFailure {
  size_t impl = 0;
  TraceVerdict verdict = TraceVerdict::pass;
  std::string cause;
  std::string detail;
};

// What judging trace `index` gave.
struct TraceOutcome {
  int64_t index = 0;
  bool drawn = false;
  std::string invalid;  // the generator's error, when the draw failed
  int64_t steps = 0;
  Trace trace;
  std::vector<TraceFailure> failures;
  double seconds = 0;  // since the campaign started
};

TraceOutcome judge_index(const TraceCampaignOptions& o, const std::vector<TraceImplementation>& impls, int64_t index,
                         Clock::time_point start) {
  TraceOutcome out;
  out.index = index;
  Rng rng(trace_seed(o.seed, index));
  Result<Trace> drawn = draw_trace(rng, o.profile, TraceDrawLimits{});
  if (!drawn) {
    out.invalid = drawn.error().message;
    return out;
  }
  out.drawn = true;
  out.trace = std::move(drawn).value();
  out.steps = static_cast<int64_t>(out.trace.steps.size());
  const Result<Timeline> timeline = validate_trace(out.trace);
  if (!timeline) {
    out.invalid = timeline.error().message;
    return out;
  }
  for (size_t i = 0; i < impls.size(); ++i) {
    if (impls[i].engine != out.trace.engine) continue;
    // A version judges only the traces its own profile runs (an older version may lack a request
    // field a newer one takes): outside it, a difference is no bug.
    const Result<Profile> own = parse_profile(impls[i].version->profile);
    if (own && !impls[i].model->check_profile(out.trace, *timeline, *own)) continue;
    const TraceJudgement j = judge_trace(impls[i], out.trace, *timeline);
    if (j.verdict == TraceVerdict::pass) continue;
    out.failures.push_back({i, j.verdict, trace_root_cause(impls[i], out.trace, *timeline), j.detail});
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

// One finding per bug: failures a patch repairs group by that patch, whatever the verdict and
// implementation; failures without a known cause group by implementation and verdict.
std::string finding_key(const TraceFailure& f, const std::vector<TraceImplementation>& impls) {
  if (!f.cause.empty() && f.cause != "step-capture") return "cause " + f.cause;
  return "impl " + impls[f.impl].name() + " " + std::string(to_string(f.verdict)) + " " + f.cause;
}

Result<std::string> write_reproducer(const TraceCampaignOptions& o, size_t index, TraceFinding& f) {
  if (o.out_dir.empty()) return std::string();
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return Error{"--out " + o.out_dir + ": cannot create the directory: " + ec.message()};
  const std::string name = "trace-finding-" + std::to_string(index + 1) + "-" + std::string(to_string(f.verdict)) + ".json";
  R3_TRY(std::filesystem::path file, output_path_inside(o.out_dir, name));
  Trace t = f.reproducer;
  t.profile = o.profile.is_any() ? std::optional<Profile>() : std::optional<Profile>(o.profile);
  t.expect = TraceExpectation{f.implementations.front(), std::string(to_string(f.verdict))};
  std::string impls;
  for (const std::string& name_of : f.implementations) impls += (impls.empty() ? "" : ", ") + name_of;
  t.note = "trace finding " + std::to_string(index + 1) + " of r3fuzz run --traces --seed " + std::to_string(o.seed) +
           " --profile " + std::string(to_string(o.profile)) + " (" + impls + "): " + f.detail +
           (f.cause.empty() ? "" : " (root cause: " + f.cause + ")");
  R3_TRY_STATUS(write_trace_file(file.string(), t));
  return file.string();
}

// The smallest trace on which the finding's first implementation still fails the same way.
void shrink_finding(TraceFinding& f, const TraceImplementation& impl, Profile profile, const TraceShrinkHook& shrink) {
  if (shrink) {
    const TraceVerdict verdict = f.verdict;
    const std::string cause = f.cause;
    f.reproducer = shrink(f.reproducer, profile,
                          [&](const Trace& candidate) { return fails_the_same(impl, candidate, verdict, cause); });
  }
  if (const Result<Timeline> timeline = validate_trace(f.reproducer))
    f.detail = judge_trace(impl, f.reproducer, *timeline).detail;
}

// A trace that shows two bugs has both patches as its root cause ("tree-accept-rows+pd-prompt-rows").
// When each of those bugs is also a finding of its own, the pair is not a third bug: its traces
// and implementations are counted in each, and it goes.
void merge_combined_causes(TraceCampaignReport& report, std::vector<size_t>& first_impl) {
  auto alone = [&](const std::string& cause, const std::vector<std::string>& impls) -> std::optional<size_t> {
    for (size_t j = 0; j < report.findings.size(); ++j) {
      const TraceFinding& f = report.findings[j];
      if (f.cause != cause) continue;
      // step-capture is each implementation's own per-step bug: the same only in the same implementation.
      if (cause == "step-capture" &&
          std::none_of(impls.begin(), impls.end(), [&](const std::string& name) {
            return std::find(f.implementations.begin(), f.implementations.end(), name) != f.implementations.end();
          }))
        continue;
      return j;
    }
    return std::nullopt;
  };
  // Merging adds implementations to a finding, which can let another combination merge: repeat
  // until nothing merges.
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = report.findings.size(); i-- > 0;) {
      const TraceFinding combined = report.findings[i];
      if (combined.cause.find('+') == std::string::npos) continue;
      std::vector<std::string> causes;
      for (size_t from = 0, plus = 0; plus != std::string::npos; from = plus + 1) {
        plus = combined.cause.find('+', from);
        causes.push_back(combined.cause.substr(from, plus - from));
      }
      std::vector<size_t> parts;
      for (const std::string& cause : causes)
        if (const std::optional<size_t> part = alone(cause, combined.implementations)) parts.push_back(*part);
      if (parts.size() != causes.size()) continue;
      for (const size_t j : parts) {
        TraceFinding& f = report.findings[j];
        f.traces += combined.traces;
        for (const std::string& name : combined.implementations)
          if (std::find(f.implementations.begin(), f.implementations.end(), name) == f.implementations.end())
            f.implementations.push_back(name);
      }
      report.findings.erase(report.findings.begin() + static_cast<std::ptrdiff_t>(i));
      report.first_seconds.erase(report.first_seconds.begin() + static_cast<std::ptrdiff_t>(i));
      first_impl.erase(first_impl.begin() + static_cast<std::ptrdiff_t>(i));
      merged = true;
    }
  }
}

}  // namespace

Result<TraceCampaignReport> run_trace_campaign(const TraceCampaignOptions& o,
                                               const std::vector<TraceImplementation>& impls,
                                               const TraceShrinkHook& shrink, const std::atomic<bool>* stop) {
  if (impls.empty()) return Error{"no trace implementation to judge"};
  TraceCampaignReport report;
  report.options = o;
  for (const TraceImplementation& impl : impls) report.implementations.push_back(impl.name());
  const Clock::time_point start = Clock::now();
  const int64_t limit = o.max_traces.value_or(INT64_MAX);
  auto out_of_time = [&] {
    if (stop != nullptr && stop->load()) return true;
    return o.max_seconds && std::chrono::duration<double>(Clock::now() - start).count() >= *o.max_seconds;
  };

  // Workers take indices in order; outcomes are merged in index order whatever finished first.
  // A judgement that throws must not leave its thread (std::terminate would end the process with
  // every finding unwritten): it stops the run at its index, as a signal would.
  std::mutex mutex;
  int64_t next = 0;
  std::map<int64_t, TraceOutcome> done;
  std::optional<std::pair<int64_t, std::string>> failure;  // the earliest index that threw
  auto fail = [&](int64_t index, std::string what) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failure || index < failure->first) failure.emplace(index, std::move(what));
  };
  auto worker = [&] {
    for (;;) {
      int64_t index = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (next >= limit || failure || out_of_time()) return;
        index = next++;
      }
      std::optional<TraceOutcome> outcome;
      if (std::optional<std::string> thrown = exception_of([&] { outcome = judge_index(o, impls, index, start); }))
        return fail(index, std::move(*thrown));
      std::lock_guard<std::mutex> lock(mutex);
      done.emplace(index, std::move(*outcome));
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < std::max(1, o.jobs); ++i) {
    try {
      threads.emplace_back(worker);
    } catch (const std::system_error& e) {
      report.threads_refused = e.what();  // the started ones judge every trace
      break;
    }
  }
  worker();
  for (std::thread& t : threads) t.join();
  report.interrupted = stop != nullptr && stop->load();
  if (failure) report.internal_error = "trace " + std::to_string(failure->first) + ": " + failure->second;

  // Under --time the workers may leave a gap: only the unbroken run of indices from 0 counts.
  std::map<std::string, size_t> finding_of;
  std::vector<size_t> first_impl;
  for (auto& [index, outcome] : done) {
    if (index != report.traces) break;
    ++report.traces;
    report.steps += outcome.steps;
    if (!outcome.invalid.empty()) {
      if (report.invalid_draws++ == 0)
        report.first_invalid = "trace #" + std::to_string(index) + " of seed " + std::to_string(o.seed) + ": " + outcome.invalid;
      continue;
    }
    std::vector<size_t> counted;
    for (const TraceFailure& failure : outcome.failures) {
      const std::string key = finding_key(failure, impls);
      auto [it, fresh] = finding_of.try_emplace(key, report.findings.size());
      if (fresh) {
        TraceFinding f;
        f.verdict = failure.verdict;
        f.cause = failure.cause;
        f.first_trace = index;
        f.reproducer = outcome.trace;
        f.detail = failure.detail;
        report.findings.push_back(std::move(f));
        report.first_seconds.push_back(outcome.seconds);
        first_impl.push_back(failure.impl);
      }
      TraceFinding& f = report.findings[it->second];
      const std::string name = impls[failure.impl].name();
      if (std::find(f.implementations.begin(), f.implementations.end(), name) == f.implementations.end())
        f.implementations.push_back(name);
      if (std::find(counted.begin(), counted.end(), it->second) == counted.end()) {
        counted.push_back(it->second);
        ++f.traces;
      }
    }
  }
  merge_combined_causes(report, first_impl);
  for (size_t i = 0; i < report.findings.size(); ++i) {
    TraceFinding& f = report.findings[i];
    // The others in --impl order after the one that opened it.
    std::vector<std::string> ordered;
    for (const std::string& name : report.implementations)
      if (std::find(f.implementations.begin(), f.implementations.end(), name) != f.implementations.end())
        ordered.push_back(name);
    f.implementations = std::move(ordered);
    // The reproducer is shrunk and named for the first implementation the finding shows in
    // that saw its first trace (the one whose failure opened it).
    shrink_finding(f, impls[first_impl[i]], o.profile, shrink);
    const std::string opener = impls[first_impl[i]].name();
    f.implementations.erase(std::find(f.implementations.begin(), f.implementations.end(), opener));
    f.implementations.insert(f.implementations.begin(), opener);
    R3_TRY(f.file, write_reproducer(o, i, f));
  }
  report.elapsed_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace r3
