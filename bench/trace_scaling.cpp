// The trace judge's cost (bench/run-benchmarks.sh, "Traces"): how judging a serving trace scales
// with its length, and what a trace step costs against judging the same step as a one-step case.
//
//   r3fuzz_trace_scaling [--repeat R] [--only IMPL] [--draws N]
//
// For each engine's fixed lifecycle model it builds traces of one shape at 1,000
// and 10,000 steps: requests arrive one a step, each extends a 4-token prompt in one step and then
// decodes 3 tokens, so a steady state runs one extend and about three decodes a step. It prints one
// tab-separated row per implementation:
//   impl  us-per-step-at-1000  us-per-step-at-10000  ratio-t(10000)/t(1000)  us-per-one-step-case  step/case
// where the one-step case is the step's own case (LifecycleModel::step_case), its step derived and
// judged concretely, as a case campaign does for each case.
//
// With --draws N it prints instead, for each fixed model, the cost of choosing completion orders of
// the copies to host (docs/TRACES.md, "Copies"): N traces drawn for the model's profile, each
// validated and judged with its drawn copies record and again with every copy in order:
//   impl  traces-per-s-in-order  traces-per-s-with-orders  share-of-traces-with-a-late-copy
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz/generate/rng.hpp"
#include "fuzz/generate/trace_generator.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/oracle/judge_trace.hpp"
#include "reference/layout.hpp"
#include "reference/trace/lifecycle.hpp"

namespace {

using namespace r3;
using Clock = std::chrono::steady_clock;

constexpr int64_t kPrompt = 4;
constexpr int64_t kOutputs = 3;

// Request i arrives at step i: its extend runs at step i, its decodes at steps i+1 .. i+kOutputs-1.
Trace steady_trace(Engine engine, int steps) {
  Trace t;
  t.engine = engine;
  t.model = {1, 2, 16};
  t.config.token_budget = 16;
  t.config.page = 1;
  t.config.kv_slots = 256;  // the steady state holds three requests; finished ones free theirs
  for (int i = 0; i < steps; ++i) {
    TraceRequest r;
    r.id = i;
    for (int64_t k = 0; k < kPrompt; ++k) r.prompt.push_back(static_cast<int32_t>(i * 16 + k + 1));
    for (int64_t k = 0; k < kOutputs; ++k) r.outputs.push_back(static_cast<int32_t>(i * 16 + 8 + k));
    t.requests.push_back(std::move(r));
  }
  t.steps.resize(static_cast<size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    for (int64_t d = kOutputs - 1; d >= 1; --d) {  // decodes first, oldest request first
      const int req = i - static_cast<int>(d);
      if (req >= 0) t.steps[static_cast<size_t>(i)].run.push_back({Work::Kind::decode, req, kPrompt + d - 1, kPrompt + d, 0});
    }
    t.steps[static_cast<size_t>(i)].run.push_back({Work::Kind::extend, i, 0, kPrompt, 0});
  }
  return t;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Microseconds per step of judging `t` (the timeline's walk included), best of `repeat`.
double us_per_step(const TraceImplementation& impl, const Trace& t, int repeat) {
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const Clock::time_point start = Clock::now();
    const Result<Timeline> timeline = validate_trace(t);
    if (!timeline) {
      std::fprintf(stderr, "r3fuzz_trace_scaling: the bench trace is invalid: %s\n", timeline.error().message.c_str());
      std::exit(2);
    }
    const TraceJudgement j = judge_trace(impl, t, *timeline);
    if (j.verdict != TraceVerdict::pass) {
      std::fprintf(stderr, "r3fuzz_trace_scaling: %s fails its bench trace: %s\n", impl.name().c_str(), j.detail.c_str());
      std::exit(2);
    }
    best = std::min(best, seconds_since(start));
  }
  return best * 1e6 / static_cast<double>(t.steps.size());
}

// Microseconds per one-step case of a steady-state step, judged concretely with the version's policy.
double us_per_case(const TraceImplementation& impl, const Trace& t, int repeat) {
  const Timeline timeline = validate_trace(t).value();
  const std::optional<Case> c = impl.model->step_case(t, timeline, static_cast<int>(t.steps.size() / 2));
  if (!c) return 0;
  const Result<std::unique_ptr<Implementation>> policy = make_implementation(impl.version->policy, {});
  if (!policy) return 0;
  constexpr int kCases = 2000;
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < kCases; ++i) {  // as a campaign does a case: derive its step, judge it
      const Step step = derive_step(*c).value();
      const Judgement j = judge_case(**policy, *c, step, JudgeMode::concrete);
      if (j.verdict != Verdict::pass) {
        std::fprintf(stderr, "r3fuzz_trace_scaling: %s fails the bench step: %s\n", impl.version->policy.data(), j.detail.c_str());
        std::exit(2);
      }
    }
    best = std::min(best, seconds_since(start));
  }
  return best * 1e6 / kCases;
}

// Traces per second of validating and judging `traces` (best of `repeat`).
double traces_per_s(const TraceImplementation& impl, const std::vector<Trace>& traces, int repeat) {
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) {
    const Clock::time_point start = Clock::now();
    for (const Trace& t : traces) {
      const Result<Timeline> timeline = validate_trace(t);
      if (timeline) (void)judge_trace(impl, t, *timeline);
    }
    best = std::min(best, seconds_since(start));
  }
  return best > 0 ? static_cast<double>(traces.size()) / best : 0.0;
}

// The --draws line of `impl`: the same drawn traces with their copies record and in order.
bool print_draws(const std::string& name, const TraceImplementation& impl, int count, int repeat) {
  const Result<Profile> profile = parse_profile(impl.version->profile);
  if (!profile) return false;
  std::vector<Trace> drawn, in_order;
  int late = 0;
  for (uint64_t seed = 1; static_cast<int>(drawn.size()) < count && seed < static_cast<uint64_t>(count) * 4; ++seed) {
    Rng rng(seed);
    Result<Trace> t = draw_trace(rng, *profile);
    if (!t) continue;
    late += !t->copies.empty();
    drawn.push_back(*t);
    t->copies.clear();
    in_order.push_back(std::move(*t));
  }
  if (drawn.empty()) return false;
  std::printf("%s\t%.0f\t%.0f\t%.2f\n", name.c_str(), traces_per_s(impl, in_order, repeat),
              traces_per_s(impl, drawn, repeat), static_cast<double>(late) / static_cast<double>(drawn.size()));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  int draws = 0;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (std::strcmp(argv[i], "--draws") == 0 && i + 1 < argc) {
      draws = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: r3fuzz_trace_scaling [--repeat R] [--only IMPL] [--draws N]\n");
      return 2;
    }
  }
  if (repeat < 1) repeat = 1;
  for (const std::string& name : fixed_trace_implementations(Profile::any())) {  // every engine's fixed model
    if (!only.empty() && only != name) continue;
    const Result<TraceImplementation> impl = make_trace_implementation(name);
    if (!impl) {
      std::fprintf(stderr, "r3fuzz_trace_scaling: %s\n", impl.error().message.c_str());
      return 2;
    }
    if (draws > 0) {
      if (!print_draws(name, *impl, draws, repeat)) {
        std::fprintf(stderr, "r3fuzz_trace_scaling: no trace drawn for %s's profile\n", name.c_str());
        return 2;
      }
      continue;
    }
    const double small = us_per_step(*impl, steady_trace(impl->engine, 1000), repeat);
    const double large = us_per_step(*impl, steady_trace(impl->engine, 10000), repeat);
    const double one_case = us_per_case(*impl, steady_trace(impl->engine, 1000), repeat);
    std::printf("%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", name.c_str(), small, large, large * 10000 / (small * 1000),
                one_case, one_case > 0 ? small / one_case : 0.0);
  }
  return 0;
}
