// The walk every vLLM lifecycle model shares: a valid trace, step by step, as vLLM's scheduler
// runs it. Per step: the events (their KV effects on vLLM's KV cache manager, lifecycle_kv.hpp),
// the requests an abort ends, each scheduled request's forward (its KV blocks allocated and
// cached, its rows handed to the version's model), the version's end of the forward, and the
// requests whose result processing ends them. A version's model is a WalkObserver.
//
// The walk also checks the trace against vLLM's scheduler (the schedule Status): hits that are
// not the longest cached run, KV the pool cannot hold, a prefix-cache reset while a request
// holds KV, a request scheduled after its abort. check_profile reports these.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reference/error.hpp"
#include "reference/engines/vllm/lifecycle_kv.hpp"
#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::vllm {

// One request's forward in one step, as vLLM schedules it.
struct ScheduledRun {
  int step = 0;
  int index = 0;  // in steps[step].run
  Work work;
  int dp = 0;
  std::vector<int> rows;    // its rows in StepView::rows[dp], in batch order
  int64_t lo = 0;           // forwarded positions [lo, hi): a verify forwards q..q+k
  int64_t hi = 0;
  int64_t kept_end = 0;     // the KV the step keeps: [lo, kept_end) (a verify: q..q+accepted)
  bool lagging = false;     // the extra forward of a request that already finished (overlap)
  bool sampled = false;     // the step samples for it: its input reaches its last known token
  int64_t tokens_before = 0;  // num_tokens when scheduled (prompt plus outputs known)
  int64_t tokens_after = 0;   // num_tokens after the step's result processing
  int version = 0;            // the weight version the forward runs at
};

class WalkObserver {
 public:
  virtual ~WalkObserver() = default;
  virtual void begin_step(int /*step*/) {}
  // Around the KV cache's handling of each event; `version` is the weight version in force.
  virtual void before_event(int /*step*/, const TraceEvent& /*e*/) {}
  virtual void after_event(int /*step*/, const TraceEvent& /*e*/, int /*version*/) {}
  // A crash message stops the walk at this step.
  virtual std::optional<std::string> forward(const ScheduledRun& run, std::span<const RouteRef> delivered) = 0;
  virtual std::optional<std::string> end_forward(int /*step*/) { return std::nullopt; }
  // The request ends (its result processing, or an abort before the forward); its KV is
  // freed right after.
  virtual void finish(int /*step*/, int /*req*/) {}
};

struct WalkResult {
  Status schedule = ok_status();  // the first rule of vLLM's scheduler the trace breaks
  std::optional<int> crash_step;
  std::string crash;              // "step 3: ..."
};

// Walks `t` once. `delivery` holds one entry per step (empty: every row delivered as itself,
// for the checks); `observer` may be null.
WalkResult walk_trace(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery, KvCache& kv,
                      WalkObserver* observer);

// What a version returns per request, from which requests it finished (`done`), how the walk
// ended and the rows it collected.
LifecycleOutcome make_outcome(const Timeline& timeline, const WalkResult& walked, const std::vector<bool>& done,
                              std::vector<std::vector<RouteRef>> rows);

}  // namespace r3::vllm
