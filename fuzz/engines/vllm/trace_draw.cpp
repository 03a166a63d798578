// vLLM's scheduler, as the trace generator (fuzz/generate/trace_generator.hpp) runs it: the V1
// scheduler's one token budget per step, running requests first, then waiting ones.
//
// Sources (vllm-project/vllm, read for this file; facts only):
//  - vllm/v1/core/sched/scheduler.py @ b4622cf: Scheduler.schedule. There is no prefill or
//    decode phase: each step hands each request tokens to close num_computed_tokens on its
//    known tokens (plus drafts), running requests first in list order, each capped by what is
//    left of the token budget (a prompt longer than that is chunked by the budget). When
//    allocate_slots fails it preempts the last running request (FCFS policy) until the request
//    fits, and stops scheduling if it preempted the request itself; a step that preempted admits
//    no waiting request. A waiting request with nothing computed takes the prefix cache's hit,
//    then the rest of its known tokens within the budget. Under async scheduling a request whose
//    previous step reaches max_tokens is not scheduled again (the num_output_placeholders check).
//  - Scheduler._preempt_request @ b4622cf: num_computed_tokens back to 0 and the request goes to
//    the front of the waiting queue (recompute).
//  - Scheduler.finish_requests (stored copy of scheduler.py): an abort from outside removes a
//    running or waiting request at once; it runs no further step.
//  - vllm/v1/core/kv_cache_manager.py @ 003df29: KVCacheManager.get_computed_blocks: the hit is
//    the longest run of cached full blocks within num_tokens - 1 (TraceKv::longest_hit).
// The KV memory is the lifecycle walk's (trace_kv.hpp).
#include <algorithm>
#include <memory>
#include <vector>

#include "fuzz/engines/vllm/parts.hpp"
#include "fuzz/engines/vllm/trace_kv.hpp"
#include "fuzz/generate/engine_trace_draw.hpp"
#include "reference/engines/vllm/lifecycle_copies.hpp"

namespace r3::vllm {
namespace {

// Whether `t` is drawn for vLLM's earlier releases (profile vllm-legacy, the slot-keyed capture).
bool legacy(const Trace& t) { return t.profile && !t.profile->is_any() && t.profile->variant() == 1; }

// One forward as the scheduler allocated it, for the replay in the walk's order.
struct Allocation {
  int req = 0;
  int64_t hit = 0;
  int64_t lo = 0;
  int64_t end = 0;
  int64_t tokens_before = 0;
};

class VllmScheduler final : public TraceScheduler {
 public:
  explicit VllmScheduler(const Trace& t) : kv_(t) {}

  // The step is decided on a copy of the KV cache, the way vLLM's scheduler meets it: the
  // requests aborted since the last step already freed (Scheduler.finish_requests), preemptions
  // freeing blocks as it goes. It is then replayed on the cache itself in the lifecycle walk's
  // order: the step's events (preemptions free), then the aborted requests, then the forwards in
  // run order. Both orders free the same blocks before any allocation that needs them; they
  // differ only in the free queue's order, and a step that preempts admits no waiting request,
  // so no hit of the step sees the difference.
  void schedule_step(SchedulerState& s, Rng& rng) override {
    bool flush = false;
    std::vector<int> aborted;
    for (const TraceEvent& e : s.current().events) {
      if (e.kind == TraceEvent::Kind::weight_update && e.flush) flush = true;
      if (e.kind == TraceEvent::Kind::abort) aborted.push_back(e.req);
    }
    TraceKv scratch = kv_;
    if (flush) scratch.reset_prefix_cache();
    for (const int r : aborted) scratch.free(r);
    std::vector<Allocation> forwards;
    for (int dp = 0; dp < s.ranks(); ++dp) {
      bool preempted = false;
      if (schedule_running(s, scratch, forwards, dp, rng, preempted) && !preempted)
        schedule_waiting(s, scratch, forwards, dp);
    }
    if (flush) kv_.reset_prefix_cache();
    for (const TraceEvent& e : s.current().events)
      if (e.kind == TraceEvent::Kind::preempt) kv_.free(e.req);
    for (const int r : aborted) kv_.free(r);
    for (const Allocation& a : forwards) kv_.forward(s, a.req, a.hit, a.lo, a.end, a.tokens_before, s.version());
  }

  // Result processing frees the finished requests' blocks, in run order.
  void step_ended(const SchedulerState& s) override {
    for (const int r : s.ended_now()) kv_.free(r);
  }

 private:
  // The last running request that is not lagging: FCFS preempts from the back of the running
  // list; a request the scheduler already saw finish is not in it.
  static int preemption_victim(const SchedulerState& s, int dp) {
    const auto& running = s.running(dp);
    for (auto it = running.rbegin(); it != running.rend(); ++it)
      if (!s.request(*it).done()) return *it;
    return -1;
  }

  static void allocate(const SchedulerState& s, TraceKv& kv, std::vector<Allocation>& forwards, const Allocation& a) {
    kv.forward(s, a.req, a.hit, a.lo, a.end, a.tokens_before, s.version());
    forwards.push_back(a);
  }

  // The running requests, in order; false when one of them could not be scheduled (the
  // scheduler then stops there).
  static bool schedule_running(SchedulerState& s, TraceKv& kv, std::vector<Allocation>& forwards, int dp, Rng& rng,
                               bool& preempted) {
    const TraceConfig& c = s.config();
    const int width = c.spec ? c.spec->width : 0;
    for (size_t i = 0; i < s.running(dp).size() && s.rows_left(dp) > 0;) {
      const int r = s.running(dp)[i];
      const SimRequest& q = s.request(r);
      if (q.done()) {  // finished in the step before; async scheduling formed this one first
        s.decode(r);
        ++i;
        continue;
      }
      const bool extend = q.needs_extend();
      // With too little budget for the drafts, the step schedules the token alone.
      const bool verify = !extend && width > 0 && s.rows_left(dp) >= width + 1;
      const int64_t len = extend ? std::min(q.extend_left(), s.rows_left(dp)) : 1;
      const Allocation a{r, 0, q.computed, q.computed + (verify ? width + 1 : len), q.known()};
      while (!kv.fits(s, r, a.end, 0)) {
        const int victim = preemption_victim(s, dp);
        s.preempt(victim, /*to_front=*/true);
        kv.free(victim);
        preempted = true;
        if (victim == r) return false;
      }
      if (extend)
        s.extend(r, len);
      else if (verify)
        s.verify(r, rng);
      else
        s.decode(r);
      allocate(s, kv, forwards, a);
      ++i;
    }
    return true;
  }

  // Waiting requests in queue order while the budget lasts. A request whose hit the trace
  // cannot name yet (blocks this step allocated, or KV recomputed at another weight version)
  // waits a step, and so does every request behind it.
  static void schedule_waiting(SchedulerState& s, TraceKv& kv, std::vector<Allocation>& forwards, int dp) {
    while (!s.waiting(dp).empty() && s.rows_left(dp) > 0) {
      const int r = s.waiting(dp).front();
      const SimRequest& q = s.request(r);
      const int64_t hit = kv.longest_hit(s, r);
      if (!kv.nameable(s, r, hit)) return;
      const int64_t len = std::min(q.known() - hit, s.rows_left(dp));
      if (!kv.fits(s, r, hit + len, hit)) return;
      const Allocation a{r, hit, hit, hit + len, q.known()};
      s.admit(r);
      if (hit > 0) s.hit(r, hit);
      s.extend(r, len);
      allocate(s, kv, forwards, a);
    }
  }

  TraceKv kv_;
};

class VllmTraceDraw final : public EngineTraceDraw {
 public:
  void draw_config(Rng& rng, Profile profile, const TraceDrawLimits& limits, Trace& t) const override {
    (void)rng;
    (void)limits;
    // The V1 scheduler chunks a prefill by the token budget, with no chunk size of its own.
    t.config.chunk = -1;
    // Chain drafts only: a verify keeps its accepted prefix (lifecycle_check.cpp).
    if (t.config.spec) t.config.spec->tree = false;
    // vLLM main's routed-experts capture requires prefix caching (docs.vllm.ai
    // training/routed_experts; contract 2.3).
    if (!profile.is_any() && profile.variant() == 0) t.config.prefix_cache = true;
  }

  TraceDrawRules rules(const Trace& t) const override {
    TraceDrawRules r;
    r.abort_runs_once_more = false;  // Scheduler.finish_requests drops it at once
    r.start_len = !legacy(t);        // routed_experts_prompt_start came with #51906
    r.prefill_only = false;          // SamplingParams refuses max_tokens < 1 (lifecycle_check.cpp)
    return r;
  }

  // Async scheduling runs a request once more after an eos or stop token the scheduler had not
  // seen yet, but never past max_tokens (the num_output_placeholders check); with drafts that
  // step would be a verify, which no lag row models.
  bool lags(const Trace& t, const SimRequest& r) const override {
    return t.config.overlap && !t.config.spec && (r.finish == Finish::eos || r.finish == Finish::stop) &&
           r.sampled < r.max_new;
  }

  std::unique_ptr<TraceScheduler> scheduler(const Trace& t) const override { return std::make_unique<VllmScheduler>(t); }

  CopyWindow copy_window(const Trace& t, const Timeline& timeline) const override {
    return vllm::copy_window(t, timeline, t.profile.value_or(Profile::any()));
  }
};

}  // namespace

const EngineTraceDraw& trace_draw_part() {
  static const VllmTraceDraw part;
  return part;
}

}  // namespace r3::vllm
