// The vLLM lifecycle walk (lifecycle_walk.hpp).
#include "reference/engines/vllm/lifecycle_walk.hpp"

#include <algorithm>
#include <unordered_map>

namespace r3::vllm {
namespace {

// What the walk knows of each request between steps.
struct RequestState {
  int64_t prompt = 0;   // P
  int64_t kept = 0;     // N: outputs it keeps in the end
  int64_t sampled = 0;  // g: outputs sampled so far
  int64_t held = 0;     // c: positions whose KV it holds
  int64_t hit = 0;      // the hit the trace gives its next first forward
  bool needs_first_forward = true;  // holds no KV: its next forward looks up the prefix cache
  bool aborted = false;
};

// Where a schedule error happened ("steps[3].run[0]: "), put into words only when one did: a
// valid trace's walk builds no message.
struct At {
  const char* part;  // "events" or "run"
  int step;
  size_t index;
  std::string text() const {
    return "steps[" + std::to_string(step) + "]." + part + "[" + std::to_string(index) + "]: ";
  }
};

class Walk {
 public:
  Walk(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery, KvCache& kv,
       WalkObserver* observer)
      : t_(t), timeline_(timeline), delivery_(delivery), kv_(kv), observer_(observer) {
    for (size_t r = 0; r < t.requests.size(); ++r) {
      RequestState s;
      if (r < timeline.requests.size()) {
        s.prompt = timeline.requests[r].prompt_len;
        s.kept = timeline.requests[r].kept_outputs;
      }
      requests_.push_back(s);
    }
  }

  WalkResult run() {
    for (int step = 0; step < static_cast<int>(t_.steps.size()) && step < static_cast<int>(timeline_.steps.size());
         ++step) {
      if (!run_step(step)) break;
    }
    return std::move(result_);
  }

 private:
  void note(const Status& s, const At& where) {
    if (!s.ok() && result_.schedule.ok()) result_.schedule = Error{where.text() + s.error().message};
  }

  void end(int step, int req) {
    if (observer_) observer_->finish(step, req);
    kv_.free(req);
  }

  void apply(int step, size_t index, const TraceEvent& e) {
    const At where{"events", step, index};
    const bool has_req = e.req >= 0 && e.req < static_cast<int>(requests_.size());
    if (e.kind != TraceEvent::Kind::weight_update && !has_req) return;
    RequestState* s = has_req ? &requests_[e.req] : nullptr;
    switch (e.kind) {
      case TraceEvent::Kind::hit:
        s->hit = e.len;
        break;
      case TraceEvent::Kind::preempt:
        kv_.free(e.req);
        s->held = 0;
        s->hit = 0;
        s->needs_first_forward = true;
        break;
      case TraceEvent::Kind::abort:
        s->aborted = true;
        break;
      case TraceEvent::Kind::weight_update:
        version_ = e.version;
        if (e.flush) {
          // vllm/v1/core/sched/interface.py: SchedulerInterface.reset_prefix_cache (docstring,
          // stored copy at eb6f5c4); vllm/v1/core/block_pool.py @ 002f349: reset_prefix_cache
          // returns False while blocks other than the null block are in use.
          if (const auto holder = kv_.any_holder()) {
            note(Error{"weight_update with flush while request " + std::to_string(*holder) +
                       " holds KV blocks: vLLM resets the prefix cache only when no request holds KV, or "
                       "after preempting every running request (SchedulerInterface.reset_prefix_cache, "
                       "vllm/v1/core/sched/interface.py; BlockPool.reset_prefix_cache, "
                       "vllm/v1/core/block_pool.py @ 002f349)"},
                 where);
          }
          kv_.reset_prefix_cache();
          truth_cache_.clear();
        }
        break;
      case TraceEvent::Kind::offload:
        kv_.offload(e.req);
        break;
      case TraceEvent::Kind::restore: {
        const auto restored = kv_.restore(e.req, s->held);
        if (!restored.ok()) note(restored.error(), where);
        s->needs_first_forward = false;
        break;
      }
      case TraceEvent::Kind::pd_handoff:
        // The prefill instance computed the prompt and sampled the first token.
        note(kv_.receive_prompt(e.req, s->prompt, version_), where);
        s->held = s->prompt;
        s->sampled = std::max<int64_t>(s->sampled, 1);
        s->needs_first_forward = false;
        break;
    }
  }

  ScheduledRun schedule(int step, size_t index, const Work& w) {
    ScheduledRun run;
    run.step = step;
    run.index = static_cast<int>(index);
    run.work = w;
    run.dp = std::clamp(t_.requests[w.req].dp, 0, std::max(t_.dp, 1) - 1);
    run.version = timeline_.steps[step].version;
    const auto& rows = timeline_.steps[step].rows;
    if (run.dp < static_cast<int>(rows.size())) {
      for (size_t j = 0; j < rows[run.dp].size(); ++j) {
        if (rows[run.dp][j].req != w.req) continue;
        run.rows.push_back(static_cast<int>(j));
        run.lagging = run.lagging || rows[run.dp][j].lagging;
      }
    }
    const int width = t_.config.spec ? t_.config.spec->width : 0;
    run.lo = w.lo;
    switch (w.kind) {
      case Work::Kind::extend:
        run.hi = w.hi;
        run.kept_end = w.hi;
        break;
      case Work::Kind::decode:
        run.hi = w.lo + 1;
        run.kept_end = run.hi;
        break;
      case Work::Kind::verify:
        run.hi = w.lo + 1 + width;
        run.kept_end = w.lo + 1 + w.accepted;
        break;
    }
    const RequestState& s = requests_[w.req];
    run.tokens_before = s.prompt + s.sampled;
    run.sampled = !run.lagging && (w.kind != Work::Kind::extend || w.hi == run.tokens_before);
    const int64_t drawn = w.kind == Work::Kind::verify ? w.accepted + 1 : 1;
    run.tokens_after = run.sampled ? s.prompt + std::min(s.sampled + drawn, s.kept) : run.tokens_before;
    return run;
  }

  // vLLM's KV side of a scheduled forward. A lagging forward is left out: the request's blocks
  // went back at its finish (Scheduler._free_request), and nothing reads them as its own again.
  void allocate(const ScheduledRun& run) {
    if (run.lagging) return;
    const At where{"run", run.step, static_cast<size_t>(run.index)};
    RequestState& s = requests_[run.work.req];
    if (s.aborted) {
      note(Error{"request " + std::to_string(run.work.req) +
                 " runs after its abort: vLLM frees an aborted request at once and never schedules it again "
                 "(Scheduler.finish_requests, vllm/v1/core/sched/scheduler.py)"},
           where);
    }
    if (s.needs_first_forward) {
      const Status hit = kv_.first_forward(run.work.req, s.hit, run.tokens_before);
      note(hit, where);
      if (hit.ok()) note(check_hit_truth(run.work.req, s.hit), where);
      s.needs_first_forward = false;
      s.hit = 0;
    }
    // Blocks for every forwarded position (a verify's drafts too: num_lookahead_tokens); full
    // blocks of known tokens are cached at schedule time (KVCacheManager.allocate_slots).
    note(kv_.allocate(run.work.req, run.hi, std::min(run.hi, run.tokens_before)), where);
    kv_.write(run.work.req, run.lo, run.hi, run.version);
  }

  // The truth (docs/TRACES.md, "Which version") takes a hit's KV from the first forward since
  // the last flush that computed the prefix; vLLM's KV cache holds whichever forward computed
  // the block it still caches. They differ only when vLLM evicted the first one and a later
  // forward at another weight version computed the prefix again: such a trace is outside what
  // the truth models, and is refused rather than judged against the wrong version.
  Status check_hit_truth(int req, int64_t hit) const {
    const auto& hashes = timeline_.requests[req].prefix_hash;
    for (int64_t p = 0; p < hit && p < static_cast<int64_t>(hashes.size()); ++p) {
      const auto first = truth_cache_.find(hashes[p]);
      const int cached = kv_.kv_version(req, p);
      if (first == truth_cache_.end() || first->second == cached) continue;
      return Error{"request " + std::to_string(req) + " hits position " + std::to_string(p) +
                   ", whose KV in vLLM's prefix cache was computed at weight version " + std::to_string(cached) +
                   " after the first forward of that prefix (version " + std::to_string(first->second) +
                   ") was evicted; the truth names the first forward since the last flush (docs/TRACES.md), "
                   "so this trace is outside what it models"};
    }
    return ok_status();
  }

  // The truth's prefix cache: the first kept forward of each prefix since the last flush.
  void remember_forwards(int step) {
    if (!t_.config.prefix_cache) return;  // only a hit reads it (check_hit_truth), and a hit needs the cache
    for (const auto& rank : timeline_.steps[step].rows) {
      for (const BatchRow& row : rank) {
        if (!row.kept || row.lagging) continue;
        const auto& hashes = timeline_.requests[row.req].prefix_hash;
        if (row.pos < static_cast<int64_t>(hashes.size())) {
          truth_cache_.try_emplace(hashes[row.pos], timeline_.steps[step].version);
        }
      }
    }
  }

  // What the worker commits for a run: its step's delivered rows, whenever the trace's copies
  // record says that step's copy landed. The copy reads the staging snapshot prepare_output took on
  // the main stream after the forward, and the output is consumed in step order, waiting for it
  // (worker.py, prepare_output and begin_step @ f99d53b): no order in vLLM's window
  // (lifecycle_copies.hpp) changes these rows.
  std::vector<RouteRef> delivered(const ScheduledRun& run) const {
    std::vector<RouteRef> out;
    const auto& rows = timeline_.steps[run.step].rows[run.dp];
    const StepDelivery* d = run.step < static_cast<int>(delivery_.size()) ? &delivery_[run.step] : nullptr;
    for (int j : run.rows) {
      if (d && run.dp < static_cast<int>(d->rows.size()) && j < static_cast<int>(d->rows[run.dp].size())) {
        out.push_back(d->rows[run.dp][j]);
        continue;
      }
      const BatchRow& row = rows[j];
      out.push_back({row.kept ? RouteRef::Kind::route : RouteRef::Kind::draft, row.req, row.pos, run.version});
    }
    return out;
  }

  bool crash(int step, const std::string& message) {
    result_.crash_step = step;
    result_.crash = "step " + std::to_string(step) + ": " + message;
    return false;
  }

  bool run_step(int step) {
    const TraceStep& ts = t_.steps[step];
    const StepView& view = timeline_.steps[step];
    if (observer_) observer_->begin_step(step);
    for (size_t i = 0; i < ts.events.size(); ++i) {
      if (observer_) observer_->before_event(step, ts.events[i]);
      apply(step, i, ts.events[i]);
      if (observer_) observer_->after_event(step, ts.events[i], version_);
    }
    for (int r : view.aborted_before) end(step, r);

    std::vector<ScheduledRun> runs;
    for (size_t i = 0; i < ts.run.size(); ++i) {
      if (ts.run[i].req < 0 || ts.run[i].req >= static_cast<int>(requests_.size())) continue;
      runs.push_back(schedule(step, i, ts.run[i]));
      allocate(runs.back());
    }
    if (step < static_cast<int>(delivery_.size()) && delivery_[step].raised) return crash(step, *delivery_[step].raised);
    for (const ScheduledRun& run : runs) {
      if (observer_) {
        if (auto message = observer_->forward(run, delivered(run))) return crash(step, *message);
      }
      if (run.lagging) continue;
      RequestState& s = requests_[run.work.req];
      s.held = run.kept_end;
      s.sampled = run.tokens_after - s.prompt;
    }
    remember_forwards(step);
    if (observer_) {
      if (auto message = observer_->end_forward(step)) return crash(step, *message);
    }
    for (int r : view.finished) end(step, r);
    return true;
  }

  const Trace& t_;
  const Timeline& timeline_;
  std::span<const StepDelivery> delivery_;
  KvCache& kv_;
  WalkObserver* observer_;
  std::vector<RequestState> requests_;
  int version_ = 0;
  std::unordered_map<uint64_t, int> truth_cache_;
  WalkResult result_;
};

}  // namespace

WalkResult walk_trace(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery, KvCache& kv,
                      WalkObserver* observer) {
  return Walk(t, timeline, delivery, kv, observer).run();
}

LifecycleOutcome make_outcome(const Timeline& timeline, const WalkResult& walked, const std::vector<bool>& done,
                              std::vector<std::vector<RouteRef>> rows) {
  LifecycleOutcome out;
  out.crash_step = walked.crash_step;
  out.crash = walked.crash;
  for (size_t r = 0; r < timeline.requests.size(); ++r) {
    RequestRoutes routes;
    if (r < done.size() && done[r]) {
      if (timeline.requests[r].returns_output) {
        routes.status = RequestRoutes::Status::returned;
        if (r < rows.size()) routes.rows = std::move(rows[r]);
      } else {
        routes.status = RequestRoutes::Status::none;
      }
    }
    out.requests.push_back(std::move(routes));
  }
  return out;
}

}  // namespace r3::vllm
