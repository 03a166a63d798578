#include "fuzz/mutants/trace_kill_matrix.hpp"

#include <algorithm>

#include "fuzz/generate/rng.hpp"
#include "fuzz/generate/trace_generator.hpp"
#include "fuzz/oracle/judge_trace.hpp"

namespace r3 {

std::vector<TraceMutantResult> trace_kill_matrix(Profile profile, uint64_t seed, int64_t max_traces) {
  std::vector<TraceMutantResult> out;
  for (const std::string& carrier : fixed_trace_implementations(profile)) {
    const Result<TraceImplementation> base = make_trace_implementation(carrier);
    if (!base) continue;
    const Profile own = profile.is_any() ? Profile::of(base->engine, 0) : profile;
    for (const LifecycleFault fault : all_lifecycle_faults()) {
      TraceImplementation impl = *base;
      impl.fault = fault;
      TraceMutantResult result{carrier, fault, false, 0, "", ""};
      Rng rng(seed);
      for (int64_t i = 0; i < max_traces && !result.killed; ++i) {
        ++result.traces;
        const Result<Trace> t = draw_trace(rng, own);
        if (!t) continue;
        const Result<Timeline> timeline = validate_trace(*t);
        if (!timeline) continue;
        const TraceJudgement j = judge_trace(impl, *t, *timeline);
        if (j.verdict == TraceVerdict::pass) continue;
        result.killed = true;
        result.verdict = std::string(to_string(j.verdict));
        result.detail = j.detail;
      }
      out.push_back(std::move(result));
    }
  }
  return out;
}

std::string trace_kill_matrix_text(const std::vector<TraceMutantResult>& results) {
  std::string out;
  size_t killed = 0;
  for (const TraceMutantResult& r : results) {
    out += "  " + r.carrier + "+" + std::string(to_string(r.fault)) + " (" + std::string(describe(r.fault)) + "): ";
    if (r.killed) {
      ++killed;
      out += "killed after " + std::to_string(r.traces) + " trace" + (r.traces == 1 ? "" : "s") + " (" + r.verdict + ": " +
             r.detail + ")\n";
    } else {
      out += "SURVIVED " + std::to_string(r.traces) + " traces\n";
    }
  }
  out += "result: " + std::to_string(killed) + " of " + std::to_string(results.size()) + " lifecycle mutants killed\n";
  return out;
}

}  // namespace r3
