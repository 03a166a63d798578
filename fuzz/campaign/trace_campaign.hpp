// A trace campaign (r3fuzz run --traces): generated serving traces, each judged with every trace
// implementation (fuzz/oracle/judge_trace.hpp), failures grouped into one finding per bug, each
// shrunk and written as a reproducer. Trace i is drawn from its own seed (seed, i), so workers
// judge traces in any order and the report of --cases N is the same for every --jobs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/io/exit_codes.hpp"
#include "fuzz/oracle/judge_trace.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

struct TraceCampaignOptions {
  uint64_t seed = 1;
  std::optional<int64_t> max_traces;
  std::optional<double> max_seconds;
  Profile profile = kDefaultProfile;
  std::string out_dir = "r3fuzz-out";  // "" writes nothing
  int jobs = 1;
  std::string program = "r3fuzz";  // the word replay lines start with
};

// How a finding's first trace becomes its reproducer: the smallest trace the predicate still
// holds for (fuzz/shrink/trace_shrink.hpp); absent: the trace as found.
using TraceShrinkHook = std::function<Trace(const Trace&, Profile, const std::function<bool(const Trace&)>&)>;

struct TraceFinding {
  TraceVerdict verdict = TraceVerdict::pass;
  std::string cause;                         // the root cause (trace_root_cause), "" when none was found
  std::vector<std::string> implementations;  // every implementation it shows in, in --impl order
  int64_t traces = 0;                        // traces that show it
  int64_t first_trace = 0;                   // the index of the first, under the campaign's seed
  Trace reproducer;                          // shrunk
  std::string detail;                        // the reproducer's judgement, first implementation
  std::string file;                          // where it was written ("" when --out is off)
};

struct TraceCampaignReport {
  TraceCampaignOptions options;
  std::vector<std::string> implementations;
  int64_t traces = 0;
  int64_t steps = 0;
  int64_t invalid_draws = 0;  // draws the generator could not make valid (a generator bug: reported)
  std::string first_invalid;  // the first such draw's error
  bool interrupted = false;
  // A judgement that threw ("trace N: what"; out of memory under a cap, or a bug): the report
  // covers the traces before it, and the run exits kInternalErrorExit.
  std::optional<std::string> internal_error;
  // Fewer workers than asked for started (the system's words): they judged every trace, with the
  // same report.
  std::optional<std::string> threads_refused;
  double elapsed_seconds = 0;
  std::vector<TraceFinding> findings;  // in order of first trace
  std::vector<double> first_seconds;   // per finding, seconds to its first trace (not reproducible)
  int exit_code() const {
    if (internal_error) return kInternalErrorExit;
    return findings.empty() && invalid_draws == 0 ? 0 : kExitFinding;
  }
};

Result<TraceCampaignReport> run_trace_campaign(const TraceCampaignOptions& options,
                                               const std::vector<TraceImplementation>& impls,
                                               const TraceShrinkHook& shrink, const std::atomic<bool>* stop = nullptr);

}  // namespace r3
