// What the trace generator (trace_generator.hpp) asks of an engine: the knobs and config its
// scheduler runs under for a profile, and its scheduler's decision for each step. The generic
// code owns the request bookkeeping (SchedulerState: what each request computed and sampled,
// where it waits or runs, what the trace's prefix cache holds); the engine's scheduler decides
// what each step forwards and which events (hits, preemptions, KV moves, P/D hand-offs) come
// before it, and keeps its own KV memory: the allocator and prefix cache its lifecycle model
// replays, so that every step it forms is one that model accepts. Each engine implements it in
// fuzz/engines/NAME/trace_draw.cpp and registers it as a fuzz-level part
// (fuzz/engines/registry.hpp).
#pragma once

#include <memory>

#include "fuzz/generate/rng.hpp"
#include "fuzz/generate/trace_generator.hpp"
#include "fuzz/generate/trace_scheduler.hpp"
#include "reference/engine.hpp"
#include "reference/trace/copies.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

// How the engine treats requests, for the generic parts of the simulation.
struct TraceDrawRules {
  // An abort of a running request lands at the result of the next forward it runs in (the
  // forward still happens); otherwise the scheduler drops the request at once.
  bool abort_runs_once_more = true;
  // Requests may ask for routes from a start position past 0.
  bool start_len = true;
  // Every request starts from a prefill instance's hand-off (a P/D decode instance), which
  // samples its first token: each request samples at least two.
  bool handoff_starts = false;
  // A request may be prefill-only (max_new 0: it samples one token and keeps none).
  bool prefill_only = true;
};

// The engine's scheduler over one trace, with its KV memory.
class TraceScheduler {
 public:
  virtual ~TraceScheduler() = default;
  // Forms step state.step(): its events and work, in batch order. The step's events so far
  // (weight updates, aborts that reached the scheduler) come first; the scheduler applies them
  // to its KV memory before it decides.
  virtual void schedule_step(SchedulerState& state, Rng& rng) = 0;
  // The step's result processing ran (SchedulerState::end_step): the KV of the requests it
  // ended (ended_now()) is released or cached.
  virtual void step_ended(const SchedulerState& state) = 0;
};

class EngineTraceDraw {
 public:
  virtual ~EngineTraceDraw() = default;

  // The engine's part of the trace's shape for `profile` (one of the engine's, or any): the
  // generic draw filled topology, model and config within `limits`; this fixes what the engine's
  // scheduler forces, drops what the profile never runs, and draws the engine's own knobs.
  virtual void draw_config(Rng& rng, Profile profile, const TraceDrawLimits& limits, Trace& t) const = 0;

  virtual TraceDrawRules rules(const Trace& t) const = 0;

  // Whether `r`, finishing at the step just run, forwards one more (discarded) row in the next
  // step under the config's overlap or async scheduling: the scheduler formed that step before
  // it saw the finish. Only asked for requests that did not end on an abort.
  virtual bool lags(const Trace& t, const SimRequest& r) const = 0;

  // A scheduler for trace `t` (shape only: topology, config, knobs), which outlives it.
  virtual std::unique_ptr<TraceScheduler> scheduler(const Trace& t) const = 0;

  // Which completion orders of the copies to host the engine's streams and events allow for the
  // valid trace `t` (reference/trace/copies.hpp): the latest done_before_step of each step's copy,
  // and the rule and source that bound it. The generator draws the trace's "copies" record within
  // it and exhaust enumerates it; the engine's lifecycle model refuses a record outside it in
  // check_profile (check_copies_within), from the same function of its reference folder. The
  // default: every copy in order.
  virtual CopyWindow copy_window(const Trace& t, const Timeline& timeline) const {
    (void)timeline;
    return in_order_window(t, "the engine states no asynchronous copy to host");
  }

  // Draws the trace's copies record within `window` (copy_window's) from `rng`, a source of its
  // own derived from the drawn trace, so the draws of the trace itself are the same with or without
  // it. The default is draw_copies_within (trace_generator.hpp); an engine overrides it to turn
  // its own older spelling of a completion order into the record.
  virtual void draw_copies(Rng& rng, const CopyWindow& window, Trace& t) const { draw_copies_within(rng, window, t); }
};

// The engine's trace part (fuzz/engines/registry.cpp); null for an engine without one.
const EngineTraceDraw* engine_trace_draw(Engine engine);

}  // namespace r3
