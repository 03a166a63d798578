// SGLang's scheduler, as the trace generator (fuzz/generate/trace_generator.hpp) runs it: a step
// is an extend batch or a decode batch, prefill first; on a P/D decode instance every request
// arrives from a prefill instance and decodes only.
//
// Sources (nokiaMS/sglang @ 30cb848, SGLang upstream main; paths under python/sglang/srt/; facts
// only):
//  - managers/scheduler.py: Scheduler.get_next_batch_to_run runs a new prefill (extend) batch
//    whenever get_new_batch_prefill forms one, else the running batch decodes
//    (update_running_batch). _get_new_batch_prefill_raw continues the one chunked request first,
//    then takes waiting requests in order while fewer than max_running_requests run; with
//    --enable-mixed-chunk (needs chunked prefill) the running requests decode inside the extend
//    batch, after its extends, and their count comes off the chunk. update_running_batch retracts
//    when check_decode_mem fails; _add_request_to_queue appends a retracted request to the
//    waiting queue.
//  - managers/schedule_policy.py: PrefillAdder.add_one_req extends a request whole when it fits
//    the rest of the chunk (without chunking, the first request always, later ones while their
//    input fits max_prefill_tokens), else truncates it to a page-aligned end and makes it the
//    chunked request; add_chunked_req continues it by at most the rest of the chunk.
//  - managers/schedule_batch.py: Req._compute_max_prefix_len (a hit covers at most all but the
//    last input token); ScheduleBatch.retract_decode (keeps at least one request; retracts
//    from the end of _get_decode_retraction_order: fewest outputs, then longest input, first);
//    Req.reset_for_retract (the request recomputes from position 0); release_req (on a P/D
//    decode instance the retract offloads the KV to host).
//  - disaggregation/decode.py: get_next_disagg_decode_batch_to_run merges the prebuilt batch of
//    requests whose KV arrived into the running batch and decodes it in the same step;
//    process_decode_queue resumes retracted requests first (resume_retracted_reqs: in retract
//    order, stopping at the first that does not fit, loading the KV back from host) and takes new
//    ones only when no retracted one is left.
//  - Overlap scheduling forms step n + 1 before step n's result is processed, so a request that
//    finished at step n decodes once more (docs/lifecycle-contract.md 2.1, "overlap lag").
//  - Scheduler.abort_request: a waiting request leaves the queue; a decoding one gets a pending
//    finish that lands at the result of its next forward (docs/lifecycle-contract.md T5); a
//    retracted or chunked one never runs again (process_pending_chunked_abort), so the generator
//    aborts only requests that decode in the step the abort reaches.
// The KV memory (pages, the radix tree, HiCache) is the lifecycle walk's (trace_kv.hpp).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/engines/sglang/trace_kv.hpp"
#include "fuzz/generate/engine_trace_draw.hpp"
#include "reference/engines/sglang/lifecycle_copies.hpp"

namespace r3::sglang {
namespace {

using Planned = TraceKv::Planned;
using Taking = TraceKv::Taking;

// A P/D decode instance: the trace names the router in front of its P/D pair.
bool disaggregated(const Trace& t) { return t.knobs.count("config.pd_router") > 0; }

class SglangScheduler final : public TraceScheduler {
 public:
  explicit SglangScheduler(const Trace& t)
      : kv_(t, disaggregated(t), knob_is_true(t, "config.hicache")), pd_(disaggregated(t)) {
    const TraceConfig& c = t.config;
    width_ = c.spec ? c.spec->width : 0;
    // A decode batch holds every running request: max_running_requests keeps it within a step.
    max_running_ = std::max<int64_t>(1, c.token_budget / (width_ + 1));
    mixed_ = knob_is_true(t, "config.mixed_chunk") && c.chunk > 1 && !c.spec;
    if (mixed_) max_running_ = std::min(max_running_, c.chunk - 1);
  }

  void schedule_step(SchedulerState& s, Rng& rng) override {
    for (const TraceEvent& e : s.current().events)
      if (e.kind == TraceEvent::Kind::weight_update && e.flush) kv_.flush();
    for (int dp = 0; dp < s.ranks(); ++dp) {
      if (pd_)
        admit_transferred(s, dp);
      else if (schedule_prefill(s, dp))
        continue;
      schedule_decode(s, dp, rng);
    }
    kv_.forward(s);
  }

  void step_ended(const SchedulerState& s) override {
    for (const int r : s.ended_now()) kv_.end(s, r);
  }

 private:
  // The chunked request: the running one whose prompt (or recompute) is not done.
  static int chunked_request(const SchedulerState& s, int dp) {
    for (const int r : s.running(dp))
      if (!s.request(r).done() && s.request(r).needs_extend()) return r;
    return -1;
  }

  // The decode row of every running request but the chunked one (a lagging row for one that
  // finished in the step before).
  static std::vector<Planned> decode_rows(const SchedulerState& s, int dp, int64_t width) {
    std::vector<Planned> rows;
    for (const int r : s.running(dp)) {
      const SimRequest& q = s.request(r);
      if (q.done()) rows.push_back({r, q.next_input(), 1, 0, true});
      else if (!q.needs_extend()) rows.push_back({r, q.computed, width + 1, width + 1, false});
    }
    return rows;
  }

  void extend(SchedulerState& s, int r, int64_t len) {
    const int64_t lo = s.request(r).computed;
    s.extend(r, len);
    kv_.plan({r, lo, len, len, false});
  }

  // The extend batch, if one forms (true when it ran something), with the running requests'
  // decodes after its extends under mixed chunked prefill.
  bool schedule_prefill(SchedulerState& s, int dp) {
    const TraceConfig& c = s.config();
    const bool chunking = c.chunk > 0;
    const int chunked = chunked_request(s, dp);
    const std::vector<Planned> mixed = mixed_ ? decode_rows(s, dp, 0) : std::vector<Planned>{};
    const auto mixed_rows = static_cast<int64_t>(mixed.size());
    int64_t rem_chunk = chunking ? c.chunk - mixed_rows : 0;
    int64_t rem_input = c.token_budget - mixed_rows;
    if (chunking && rem_chunk <= 0) return false;
    auto with = [&](Planned w) {
      std::vector<Planned> extra = {w};
      extra.insert(extra.end(), mixed.begin(), mixed.end());
      return extra;
    };
    bool ran = false;
    if (chunked >= 0) {
      const SimRequest& q = s.request(chunked);
      const int64_t len = std::min(q.extend_left(), chunking ? rem_chunk : rem_input);
      if (!kv_.fits(s, dp, Taking{}, with({chunked, q.computed, len, len, false}))) return false;
      extend(s, chunked, len);
      rem_chunk -= len;
      rem_input -= len;
      ran = true;
    }
    // The chunked request counts, and so does one that finished in the step before (under
    // overlap the running batch still holds it).
    auto running = static_cast<int64_t>(s.running(dp).size());
    while ((chunked < 0 || !s.request(chunked).needs_extend()) && !s.waiting(dp).empty() && running < max_running_) {
      const int r = s.waiting(dp).front();
      const SimRequest& q = s.request(r);
      const int64_t hit = kv_.hit_for(s, r);
      const int64_t input = q.known() - hit;
      int64_t len = input;
      if (chunking && input > rem_chunk) {  // truncated to a page-aligned end: the new chunked request
        len = (hit + rem_chunk) / c.page * c.page - hit;
        if (len <= 0) break;
      } else if (!chunking && ran && input >= rem_input) {
        break;
      }
      const Taking taking{hit > 0 ? Taking::Kind::hit : Taking::Kind::none, r, hit};
      if (!kv_.fits(s, dp, taking, with({r, hit, len, len, false}))) break;
      s.admit(r);
      if (hit > 0) {
        s.hit(r, hit);
        kv_.take(s, taking);
      }
      extend(s, r, len);
      rem_chunk -= len;
      rem_input -= len;
      ran = true;
      ++running;
      if (len < input) break;  // the chunk is spent
    }
    if (ran)
      for (const Planned& w : mixed) {
        s.decode(w.req);
        kv_.plan(w);
      }
    return ran;
  }

  // A P/D decode instance takes requests whose KV arrived into its running batch, which
  // decodes in the same step (decode.py @ 30cb848: get_next_disagg_decode_batch_to_run merges the
  // prebuilt batch, then update_running_batch). process_decode_queue first loads retracted
  // requests back from host (resume_retracted_reqs, in retract order, stopping at the first that
  // does not fit) and takes new ones only when none is left.
  void admit_transferred(SchedulerState& s, int dp) {
    auto running = static_cast<int64_t>(s.running(dp).size());
    bool retracted_left = false;
    for (const int r : std::vector<int>(s.waiting(dp))) {
      if (!s.request(r).offloaded) continue;
      const Taking taking{Taking::Kind::restore, r, 0};
      if (retracted_left || running >= max_running_ || !fits_with_batch(s, dp, taking, r)) {
        retracted_left = true;
        continue;
      }
      s.restore(r);
      kv_.take(s, taking);
      ++running;
    }
    if (retracted_left) return;
    for (const int r : std::vector<int>(s.waiting(dp))) {
      if (s.request(r).started || running >= max_running_) continue;
      const Taking taking{Taking::Kind::handoff, r, 0};
      if (!fits_with_batch(s, dp, taking, r)) break;
      s.pd_handoff(r);
      s.admit(r);
      kv_.take(s, taking);
      ++running;
    }
  }

  // Whether the rank's decode batch, with `r` in it, fits after `taking`.
  bool fits_with_batch(const SchedulerState& s, int dp, const Taking& taking, int r) const {
    std::vector<Planned> batch = decode_rows(s, dp, width_);
    const SimRequest& q = s.request(r);
    const int64_t at = taking.kind == Taking::Kind::handoff ? q.prompt_len : q.computed;
    batch.push_back({r, at, width_ + 1, width_ + 1, false});
    return kv_.fits(s, dp, taking, batch);
  }

  // The decode batch: every running request, retracting until its pages fit (update_running_batch;
  // on a P/D decode instance the retract offloads the KV to host: schedule_batch.py, release_req).
  void schedule_decode(SchedulerState& s, int dp, Rng& rng) {
    std::vector<Planned> batch = decode_rows(s, dp, width_);
    while (!batch.empty() && !kv_.fits(s, dp, Taking{}, batch)) {
      std::vector<int> live;
      for (const Planned& w : batch)
        if (!w.lag) live.push_back(w.req);
      if (live.size() <= 1) {
        // Even one request does not fit beside the lagging rows: those extra rows are the ones
        // the model drops, else the rank sits this step out.
        const auto lag = std::find_if(batch.begin(), batch.end(), [](const Planned& w) { return w.lag; });
        if (lag == batch.end()) return;
        batch.erase(lag);
        continue;
      }
      // retract_decode: the request with the fewest outputs, then the longest input, goes first.
      const int victim = *std::min_element(live.begin(), live.end(), [&](int a, int b) {
        const SimRequest& x = s.request(a);
        const SimRequest& y = s.request(b);
        if (x.sampled != y.sampled) return x.sampled < y.sampled;
        if (x.prompt_len != y.prompt_len) return x.prompt_len > y.prompt_len;
        return a > b;
      });
      if (pd_) {
        s.offload(victim);
        kv_.offload(s, victim);
      } else {
        s.preempt(victim, /*to_front=*/false);
        kv_.release(s, victim);
      }
      batch.erase(std::remove_if(batch.begin(), batch.end(), [&](const Planned& w) { return w.req == victim; }), batch.end());
    }
    for (Planned w : batch) {
      if (!w.lag && width_ > 0) {
        s.verify(w.req, rng);
        w.kept = s.current().run.back().accepted + 1;
      } else {
        s.decode(w.req);
      }
      kv_.plan(w);
    }
  }

  TraceKv kv_;
  bool pd_ = false;
  int64_t width_ = 0;
  int64_t max_running_ = 1;
  bool mixed_ = false;
};

// Knob values are JSON scalar text.
void set_knob(Trace& t, const char* key, std::string value) { t.knobs[key] = std::move(value); }

class SglangTraceDraw final : public EngineTraceDraw {
 public:
  void draw_config(Rng& rng, Profile profile, const TraceDrawLimits& limits, Trace& t) const override {
    (void)profile;  // both profiles refuse the same traces (reference lifecycle_profile.cpp)
    TraceConfig& c = t.config;
    // A chunk is whole pages and fits the rows of one step; without chunking the first waiting
    // request is always taken whole, so one step must hold the longest request.
    if (c.chunk > 0) c.chunk = std::max<int64_t>(c.page, std::min(c.chunk, c.token_budget) / c.page * c.page);
    if (c.chunk <= 0) c.token_budget = std::max<int64_t>(c.token_budget, limits.max_prompt + limits.max_outputs);
    c.token_budget = std::max(c.token_budget, c.chunk);
    // DP attention (on with dp > 1) captures decode graphs of batch sizes aligned to attn_tp
    // (utils/common.py, get_cuda_graph_batch_size_alignment).
    if (t.dp > 1)
      c.cuda_graph_decode.erase(std::remove_if(c.cuda_graph_decode.begin(), c.cuda_graph_decode.end(),
                                               [&](int64_t size) { return size % t.tp != 0; }),
                                c.cuda_graph_decode.end());
    // Now and then a P/D decode instance: its requests arrive with their prompt's KV and first
    // token from a prefill instance, and a retract moves the KV to host and back.
    const bool pd = limits.max_outputs >= 2 && rng.chance(25);  // the prefill samples the first output
    if (pd) set_knob(t, "config.pd_router", rng.chance(50) ? "\"mini_lb\"" : "\"none\"");
    if (c.spec) {
      c.spec->tree = rng.chance(30);  // EAGLE topk > 1
      // NGRAM is refused with DP attention (speculative_hook.py, _handle_ngram).
      if (t.dp == 1 && rng.chance(30)) set_knob(t, "config.spec_algorithm", "\"ngram\"");
    } else if (!pd && c.chunk > 1 && rng.chance(35)) {
      set_knob(t, "config.mixed_chunk", "true");
    }
    if (!pd && c.prefix_cache && rng.chance(20)) set_knob(t, "config.hicache", "true");
    // Every deferred copy losing the race to the next forward (S8): the knob carries the draw to
    // draw_copies, which writes it as the copies record.
    if (c.overlap && rng.chance(30)) set_knob(t, "config.overlap_copy_race", "true");
  }

  CopyWindow copy_window(const Trace& t, const Timeline& timeline) const override {
    return sglang::copy_window(t, timeline);
  }

  // The knob drawn above becomes a record with every copy as late as the window allows (what the
  // knob means: lifecycle_copies.hpp); otherwise the generic draw.
  void draw_copies(Rng& rng, const CopyWindow& window, Trace& t) const override {
    if (t.knobs.erase("config.overlap_copy_race") == 0) {
      draw_copies_within(rng, window, t);
      return;
    }
    t.copies.clear();
    for (size_t s = 0; s < window.latest.size(); ++s)
      if (window.latest[s] > static_cast<int>(s) + 1) t.copies.push_back({static_cast<int>(s), window.latest[s]});
  }

  TraceDrawRules rules(const Trace& t) const override {
    TraceDrawRules r;  // an abort lands at the next forward (Scheduler.abort_request)
    r.handoff_starts = disaggregated(t);
    return r;
  }

  // Overlap scheduling forms the next step before this one's result is processed: a finished
  // request decodes once more, unless it is prefill-only, or the step verifies drafts.
  bool lags(const Trace& t, const SimRequest& r) const override {
    return t.config.overlap && !t.config.spec && r.max_new > 0;
  }

  std::unique_ptr<TraceScheduler> scheduler(const Trace& t) const override { return std::make_unique<SglangScheduler>(t); }
};

}  // namespace

const EngineTraceDraw& trace_draw_part() {
  static const SglangTraceDraw part;
  return part;
}

}  // namespace r3::sglang
