#include "fuzz/mutants/trace_kill_matrix.hpp"

#include <algorithm>

#include "fuzz/generate/rng.hpp"
#include "fuzz/generate/trace_generator.hpp"
#include "fuzz/oracle/judge_trace.hpp"

namespace r3 {

namespace {

// The bounded search for a copy-order fault the drawn traces did not kill.
void prove(const TraceImplementation& impl, Profile profile, TraceMutantResult& result) {
  const Result<TraceExhaustResult> r = exhaust_traces(impl, profile, kCopyProofBounds);
  if (!r) return;
  result.exhausted = true;
  result.exhaust_judged = r->judged;
  if (!r->counterexample) {
    result.equivalent = true;
    return;
  }
  result.killed = true;
  const std::string::size_type colon = r->detail.find(": ");
  result.verdict = r->detail.substr(0, colon);
  result.detail = colon == std::string::npos ? "" : r->detail.substr(colon + 2);
}

std::string bounds_text(const TraceSpaceBounds& b) {
  return std::to_string(b.max_requests) + " requests, " + std::to_string(b.max_steps) + " steps, prompts of " +
         std::to_string(b.max_prompt) + ", " + std::to_string(b.max_outputs) + " outputs, every completion order";
}

}  // namespace

std::vector<TraceMutantResult> trace_kill_matrix(Profile profile, uint64_t seed, int64_t max_traces) {
  std::vector<TraceMutantResult> out;
  for (const std::string& carrier : fixed_trace_implementations(profile)) {
    const Result<TraceImplementation> base = make_trace_implementation(carrier);
    if (!base) continue;
    const Profile own = profile.is_any() ? Profile::of(base->engine, 0) : profile;
    std::vector<LifecycleFault> faults(all_lifecycle_faults().begin(), all_lifecycle_faults().end());
    faults.insert(faults.end(), all_copy_faults().begin(), all_copy_faults().end());
    for (const LifecycleFault fault : faults) {
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
      if (!result.killed && is_copy_fault(fault)) prove(impl, own, result);
      out.push_back(std::move(result));
    }
  }
  return out;
}

std::string trace_kill_matrix_text(const std::vector<TraceMutantResult>& results) {
  std::string out;
  size_t killed = 0, total = 0, copy_killed = 0, copy_total = 0, equivalent = 0;
  for (const TraceMutantResult& r : results) {
    const bool copy = is_copy_fault(r.fault);
    ++(copy ? copy_total : total);
    out += "  " + r.carrier + "+" + std::string(to_string(r.fault)) + " (" + std::string(describe(r.fault)) + "): ";
    if (r.killed) {
      ++(copy ? copy_killed : killed);
      if (r.exhausted) {
        out += "killed by the bounded search after " + std::to_string(r.traces) + " drawn traces and " +
               std::to_string(r.exhaust_judged) + " tiny ones (" + r.verdict + ": " + r.detail + ")\n";
      } else {
        out += "killed after " + std::to_string(r.traces) + " trace" + (r.traces == 1 ? "" : "s") + " (" + r.verdict +
               ": " + r.detail + ")\n";
      }
    } else if (r.equivalent) {
      ++equivalent;
      out += "equivalent within bounds (" + bounds_text(kCopyProofBounds) + ": " + std::to_string(r.exhaust_judged) +
             " judged) after " + std::to_string(r.traces) + " drawn traces\n";
    } else {
      out += "SURVIVED " + std::to_string(r.traces) + " traces\n";
    }
  }
  out += "result: " + std::to_string(killed) + " of " + std::to_string(total) + " lifecycle mutants killed\n";
  if (copy_total > 0) {
    out += "result: " + std::to_string(copy_killed) + " of " + std::to_string(copy_total) +
           " copy-order mutants killed, " + std::to_string(equivalent) + " equivalent within bounds\n";
  }
  return out;
}

}  // namespace r3
