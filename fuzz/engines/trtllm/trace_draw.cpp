// TensorRT-LLM's scheduler, as the trace generator (fuzz/generate/trace_generator.hpp) runs it,
// within what the trtllm lifecycle model covers (reference/engines/trtllm/lifecycle_check.cpp):
// one DP rank, no speculative decoding, no KV offload or P/D.
//
// What it draws, and why:
//  - each forward holds the context requests (prompt chunks, re-prefills) first and then the
//    generation requests, the order RouteCapture._prepare lays rows out in (route_capture.py @
//    06a976ce, aa94b01; contract R2); generation requests take their one row each before context
//    chunks share what is left of max_num_tokens (config.token_budget);
//  - a context request's chunk is at most config.chunk (chunked prefill);
//  - a request admitted with nothing computed reuses the longest prefix some earlier forward
//    computed since the last flush (KV cache reuse; the route cache reads any hit length back,
//    contract R4), less its last token;
//  - KV eviction: a running request is sometimes evicted and re-prefilled through its last known
//    token (contract N2, reading (a), the default);
//  - under the overlap scheduler a request that finishes on a stop token runs one more
//    generation step (contract N3, reading (a)).
// The KV pool itself is not modelled: the trace's prefix cache (SchedulerState) is the truth's.
#include <algorithm>
#include <memory>
#include <unordered_set>
#include <vector>

#include "fuzz/engines/trtllm/parts.hpp"
#include "fuzz/generate/engine_trace_draw.hpp"
#include "reference/engines/trtllm/lifecycle_copies.hpp"
#include "reference/engines/trtllm/lifecycle_rules.hpp"

namespace r3::trtllm {
namespace {

class TrtllmScheduler final : public TraceScheduler {
 public:
  explicit TrtllmScheduler(const Trace& t) : chunk_(t.config.chunk), caching_(t.config.prefix_cache) {}

  void schedule_step(SchedulerState& s, Rng& rng) override {
    for (int dp = 0; dp < s.ranks(); ++dp) schedule_rank(s, dp, rng);
  }
  void step_ended(const SchedulerState&) override {}

 private:
  int64_t chunk_of(int64_t left, int64_t budget) const {
    int64_t n = std::min(left, budget);
    if (chunk_ > 0) n = std::min(n, chunk_);
    return n;
  }

  void schedule_rank(SchedulerState& s, int dp, Rng& rng) {
    // KV eviction of one running request that holds KV, now and then.
    if (rng.chance(6)) {
      std::vector<int> victims;
      for (int r : s.running(dp))
        if (!s.request(r).done() && s.request(r).computed > 0) victims.push_back(r);
      if (!victims.empty()) {
        const int victim = victims[rng.below(victims.size())];
        s.preempt(victim, /*to_front=*/true);
        generating_.erase(victim);
      }
    }
    int64_t budget = s.rows_left(dp);
    std::vector<int> generation;
    std::vector<int> context;
    for (int r : s.running(dp)) {
      const SimRequest& q = s.request(r);
      // A request stays in its context phase until a context chunk samples its next token,
      // even when what is left to compute is that one token.
      if (q.done() || generating_.count(r)) {
        if (budget > 0) {
          generation.push_back(r);
          --budget;
        }
      } else {
        context.push_back(r);
      }
    }
    // Context chunks of running requests, then waiting requests, while rows are left.
    for (int r : context) {
      const int64_t n = chunk_of(s.request(r).extend_left(), budget);
      if (n <= 0) break;
      extend(s, r, n);
      budget -= n;
    }
    while (!s.waiting(dp).empty() && budget > 0) {
      const int r = s.waiting(dp).front();
      const SimRequest& q = s.request(r);
      int64_t hit = 0;
      if (caching_ && q.computed == 0 && q.known() > 1) hit = s.forwarded_prefix(r, q.known() - 1);
      if (hit > 0 && rng.chance(20)) hit = rng.range(1, hit);  // a shorter reuse (block granularity)
      s.admit(r);
      if (hit > 0) s.hit(r, hit);
      const int64_t n = chunk_of(s.request(r).extend_left(), budget);
      extend(s, r, n);
      budget -= n;
    }
    for (int r : generation) s.decode(r);
  }

  // A context chunk; one that reaches the last known token samples and ends the context phase.
  void extend(SchedulerState& s, int r, int64_t n) {
    if (s.request(r).computed + n >= s.request(r).known()) generating_.insert(r);
    s.extend(r, n);
  }

  int64_t chunk_;
  bool caching_;
  std::unordered_set<int> generating_;  // requests in their generation phase
};

void set_knob(Trace& t, std::string_view key, std::string value) { t.knobs[std::string(key)] = std::move(value); }

class TrtllmTraceDraw final : public EngineTraceDraw {
 public:
  void draw_config(Rng& rng, Profile profile, const TraceDrawLimits& limits, Trace& t) const override {
    (void)profile;
    (void)limits;
    t.dp = 1;            // the model covers one DP rank (lifecycle_check.cpp)
    t.config.spec.reset();  // RouteCapture.create refuses speculative decoding
    if (rng.chance(30)) set_knob(t, kKnobMoeBackend, rng.chance(50) ? "\"cutlass\"" : "\"deepgemm\"");
  }

  TraceDrawRules rules(const Trace&) const override {
    TraceDrawRules r;
    r.start_len = false;  // no routes start field: RouteCapture.assemble starts at 0
    return r;
  }

  bool lags(const Trace& t, const SimRequest& r) const override {
    return t.config.overlap && (r.finish == Finish::eos || r.finish == Finish::stop) && r.sampled < r.max_new;
  }

  std::unique_ptr<TraceScheduler> scheduler(const Trace& t) const override { return std::make_unique<TrtllmScheduler>(t); }

  // The copies record within the ring's bound (reference/engines/trtllm/lifecycle_copies.hpp).
  CopyWindow copy_window(const Trace& t, const Timeline& timeline) const override {
    return trtllm::copy_window(t, timeline);
  }
};

}  // namespace

const EngineTraceDraw& trace_draw_part() {
  static const TrtllmTraceDraw part;
  return part;
}

}  // namespace r3::trtllm
