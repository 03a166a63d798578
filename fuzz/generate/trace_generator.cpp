#include "fuzz/generate/trace_generator.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/generate/engine_trace_draw.hpp"
#include "fuzz/generate/trace_scheduler.hpp"
#include "reference/limits.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3 {
namespace {

// Token ids: the stop tokens an eos or stop finish ends on, and an alphabet small enough that
// prompts drawn apart still share prefixes now and then.
constexpr int32_t kStopToken = 1;
constexpr int32_t kEosToken = 2;
constexpr int32_t kFirstWord = 3;
constexpr int32_t kWords = 40;

int32_t word(Rng& rng) { return kFirstWord + static_cast<int32_t>(rng.below(kWords)); }

// Limits a draw can honour: every count at least 1, and within what a trace may hold
// (reference/trace/timeline.cpp).
Status check_limits(const TraceDrawLimits& l) {
  const std::pair<const char*, int> bounded[] = {
      {"max_requests", l.max_requests}, {"max_steps", l.max_steps}, {"max_prompt", l.max_prompt},
      {"max_outputs", l.max_outputs},   {"max_dp", l.max_dp},       {"max_tp", l.max_tp},
      {"max_layers", l.max_layers},     {"max_top_k", l.max_top_k}, {"max_experts", l.max_experts},
      {"max_spec_width", l.max_spec_width}};
  for (const auto& [name, value] : bounded)
    if (value < 1) return Error{"TraceDrawLimits." + std::string(name) + ": " + std::to_string(value) + " is below 1"};
  if (l.max_experts < l.max_top_k)
    return Error{"TraceDrawLimits.max_experts: " + std::to_string(l.max_experts) + " is below max_top_k = " +
                 std::to_string(l.max_top_k) + " (a model routes to top_k distinct experts)"};
  if (l.max_dp > 64 || l.max_tp > limits::kMaxTp || l.max_layers > limits::kMaxLayers || l.max_spec_width > 16)
    return Error{"TraceDrawLimits: max_dp <= 64, max_tp <= " + std::to_string(limits::kMaxTp) + ", max_layers <= " +
                 std::to_string(limits::kMaxLayers) + " and max_spec_width <= 16 bound what a trace holds"};
  return ok_status();
}

Result<Engine> pick_engine(Rng& rng, Profile profile) {
  auto drawable = [](Engine e) { return lifecycle_of(e) != nullptr && engine_trace_draw(e) != nullptr; };
  if (!profile.is_any()) {
    const Engine engine = profile.engine();
    if (!drawable(engine))
      return Error{"profile " + std::string(profile.name()) + ": engine " + std::string(engine.name()) +
                   " has no lifecycle model or no trace part, so no trace of it can be drawn"};
    return engine;
  }
  std::vector<Engine> engines;
  for (const Engine e : all_engines())
    if (drawable(e)) engines.push_back(e);
  if (engines.empty()) return Error{"profile any: no engine has both a lifecycle model and a trace part"};
  return engines[rng.below(engines.size())];
}

// Topology, model and the config every engine shares; the engine's part adjusts it after.
void draw_shape(Rng& rng, const TraceDrawLimits& limits, Trace& t) {
  t.dp = static_cast<int>(rng.range(1, limits.max_dp));
  t.tp = static_cast<int>(rng.range(1, limits.max_tp));
  t.model.layers = static_cast<int>(rng.range(1, limits.max_layers));
  t.model.top_k = static_cast<int>(rng.range(1, limits.max_top_k));
  t.model.experts = static_cast<int>(rng.range(t.model.top_k, limits.max_experts));
  TraceConfig& c = t.config;
  c.page = rng.pick<int64_t>({1, 2, 4});
  c.token_budget = rng.range(2, limits.max_prompt + 4);
  c.chunk = rng.chance(50) ? c.page * rng.range(1, std::max<int64_t>(1, c.token_budget / c.page)) : -1;
  c.prefix_cache = rng.chance(65);
  c.overlap = rng.chance(45);
  if (rng.chance(25)) c.spec = SpecConfig{static_cast<int>(rng.range(1, limits.max_spec_width)), false};
  if (rng.chance(30))
    for (int64_t size = 1; size <= c.token_budget && (c.cuda_graph_decode.empty() || rng.chance(75)); size *= 2)
      c.cuda_graph_decode.push_back(size);
}

struct Planned {
  SimRequest sim;
  std::vector<int32_t> tokens;  // prompt, then every output it samples before its finish
  int64_t start_len = 0;
  int arrival = 0;
  std::optional<int> resume_of;
};

// The finish and outputs of a request with `prompt`, from `min_outputs` (1 or 2) to
// `max_outputs` of them; prefill-only sometimes, where the engine runs such requests.
Planned plan_outputs(Rng& rng, std::vector<int32_t> prompt, int64_t min_outputs, int64_t max_outputs,
                     bool prefill_only) {
  Planned p;
  p.sim.prompt_len = static_cast<int64_t>(prompt.size());
  p.tokens = std::move(prompt);
  const int64_t n = rng.range(min_outputs, std::max(min_outputs, max_outputs));
  const uint64_t kind = rng.below(100);
  if (kind < 8 && min_outputs < 2 && prefill_only) {  // it samples one token and keeps none
    p.sim.finish = Finish::length;
    p.sim.max_new = 0;
    p.sim.target = 1;
    p.tokens.push_back(word(rng));
    return p;
  }
  p.sim.finish = kind < 50 ? Finish::length : kind < 78 ? Finish::eos : Finish::stop;
  for (int64_t i = 0; i + 1 < n; ++i) p.tokens.push_back(word(rng));
  p.tokens.push_back(p.sim.finish == Finish::eos ? kEosToken : p.sim.finish == Finish::stop ? kStopToken : word(rng));
  p.sim.target = n;
  p.sim.max_new = p.sim.finish == Finish::length ? n : n + rng.range(0, 2);
  return p;
}

int64_t min_outputs(const TraceDrawRules& rules) { return rules.handoff_starts ? 2 : 1; }

std::vector<Planned> plan_requests(Rng& rng, const TraceDrawLimits& limits, const Trace& t, const TraceDrawRules& rules) {
  std::vector<std::vector<int32_t>> stems(static_cast<size_t>(rng.range(1, 3)));
  for (auto& stem : stems) {
    stem.resize(static_cast<size_t>(rng.range(1, limits.max_prompt)));
    for (int32_t& token : stem) token = word(rng);
  }
  std::vector<Planned> out(static_cast<size_t>(rng.range(1, limits.max_requests)));
  int arrival = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    std::vector<int32_t> prompt;
    if (rng.chance(70)) {  // a shared stem's prefix, then its own tokens
      const auto& stem = stems[rng.below(stems.size())];
      prompt.assign(stem.begin(), stem.begin() + rng.range(1, static_cast<int64_t>(stem.size())));
    }
    const int64_t len = rng.range(std::max<int64_t>(1, static_cast<int64_t>(prompt.size())), limits.max_prompt);
    while (static_cast<int64_t>(prompt.size()) < len) prompt.push_back(word(rng));
    Planned& p = out[i] =
        plan_outputs(rng, std::move(prompt), min_outputs(rules), limits.max_outputs, rules.prefill_only);
    p.sim.dp = static_cast<int>(rng.below(static_cast<uint64_t>(t.dp)));
    if (rules.start_len && rng.chance(20)) p.start_len = rng.range(0, p.sim.prompt_len);
    if (i > 0 && rng.chance(50)) arrival += static_cast<int>(rng.range(1, 3));
    p.arrival = arrival;
  }
  return out;
}

// KV for the longest request on its own (`longest` tokens, with its drafts, a reserved page, a
// page of rounding and one for a lagging row), sometimes barely more, so that requests contend.
void draw_kv(Rng& rng, int64_t longest, TraceConfig& c) {
  if (c.spec) c.token_budget = std::max<int64_t>(c.token_budget, c.spec->width + 1);
  const int64_t lookahead = c.spec ? c.spec->width + 1 : 1;
  const int64_t pages = (longest + lookahead + c.page - 1) / c.page + 3;
  c.kv_slots = c.page * (rng.chance(50) ? rng.range(pages, pages + 1) : rng.range(2 * pages, 4 * pages));
}

// The most tokens (prompt and outputs) any planned request holds.
int64_t longest_request(const std::vector<Planned>& plan) {
  int64_t longest = 1;
  for (const Planned& p : plan) longest = std::max(longest, static_cast<int64_t>(p.tokens.size()));
  return longest;
}

// The simulation: the engine's scheduler step by step, with the arrivals, aborts and weight
// updates that reach it between steps.
class Simulation {
 public:
  // `longest`: the most tokens a request may hold (the KV was sized for it).
  Simulation(Rng& rng, const TraceDrawLimits& limits, const EngineTraceDraw& part, Trace& t, std::vector<Planned> plan,
             int64_t longest)
      : rng_(rng), limits_(limits), part_(part), t_(t), rules_(part.rules(t)), state_(t), scheduler_(part.scheduler(t)),
        longest_(longest) {
    for (Planned& p : plan) add(std::move(p));
  }

  void run() {
    plan_update();
    for (int tries = 0; static_cast<int>(t_.steps.size()) < limits_.max_steps && tries < 4 * limits_.max_steps; ++tries) {
      if (!active_or_pending()) break;
      const int n = static_cast<int>(t_.steps.size());
      state_.begin_step(n);
      if (flush_due()) {
        // A step of its own: both engines flush only with no request queued or running.
        state_.weight_update(true);
        update_.reset();
      } else {
        arrive(n);
        between_steps(n);
      }
      scheduler_->schedule_step(state_, rng_);
      if (rules_.abort_runs_once_more) abort_in_step();
      if (state_.current().run.empty() && state_.current().events.empty()) {
        if (!pull_next_arrival(n)) break;  // nothing can run and nothing more arrives
        continue;
      }
      state_.end_step([&](const SimRequest& r) { return part_.lags(t_, r); });
      scheduler_->step_ended(state_);
      t_.steps.push_back(state_.take_step());
      resume_aborted(n);
    }
    write_requests();
  }

 private:
  struct Update {
    int step = 0;
    bool flush = false;
  };

  void add(Planned p) {
    state_.add_request(p.sim, p.tokens);
    plans_.push_back(std::move(p));
  }

  // A weight update now and then; one that flushes the prefix cache holds the later requests
  // back until every earlier one has finished, so that the engine can flush.
  void plan_update() {
    if (!rng_.chance(18)) return;
    update_ = Update{static_cast<int>(rng_.range(0, limits_.max_steps - 1)), rng_.chance(50)};
    if (update_->flush) hold_from_ = state_.request_count() < 2 ? 0 : static_cast<int>(rng_.range(1, state_.request_count() - 1));
  }

  bool held(int r) const { return update_ && update_->flush && r >= hold_from_; }

  bool flush_due() const {
    if (!update_ || !update_->flush) return false;
    for (int r = 0; r < state_.request_count(); ++r) {
      const SimRequest& q = state_.request(r);
      if ((!held(r) && !q.done()) || q.lag_pending) return false;
    }
    return true;
  }

  bool active_or_pending() const {
    for (int r = 0; r < state_.request_count(); ++r) {
      const SimRequest& q = state_.request(r);
      if (!q.done() || q.lag_pending) return true;
    }
    return false;
  }

  void arrive(int n) {
    for (int r = 0; r < state_.request_count(); ++r) {
      if (state_.request(r).arrived || held(r) || plans_[static_cast<size_t>(r)].arrival > n) continue;
      plans_[static_cast<size_t>(r)].arrival = n;  // a held request arrives late
      state_.arrive(r);
    }
    bool idle = true;
    for (int r = 0; r < state_.request_count(); ++r) {
      const SimRequest& q = state_.request(r);
      if ((q.arrived && !q.done()) || q.lag_pending) idle = false;
    }
    if (idle && pull_next_arrival(n)) arrive(n);  // a serving engine has no empty steps
  }

  // Brings the next request to arrive forward to step n; false when none is left.
  bool pull_next_arrival(int n) {
    int next = -1;
    for (int r = 0; r < state_.request_count(); ++r) {
      if (state_.request(r).arrived || held(r)) continue;
      if (next < 0 || plans_[static_cast<size_t>(r)].arrival < plans_[static_cast<size_t>(next)].arrival) next = r;
    }
    if (next < 0) return false;
    plans_[static_cast<size_t>(next)].arrival = n;
    return true;
  }

  // What reaches the scheduler before it forms step n: a weight update that keeps the cache,
  // the abort of a waiting request, and (where the scheduler drops an aborted request at once)
  // the abort of a running one.
  void between_steps(int n) {
    if (update_ && !update_->flush && n >= update_->step) {
      state_.weight_update(false);
      update_.reset();
    }
    if (rng_.chance(6)) {
      std::vector<int> waiting;
      for (int d = 0; d < state_.ranks(); ++d)
        for (const int r : state_.waiting(d))
          if (!state_.request(r).started) waiting.push_back(r);
      if (!waiting.empty()) state_.abort(waiting[rng_.below(waiting.size())]);
    }
    if (!rules_.abort_runs_once_more && rng_.chance(8)) {
      std::vector<int> running;
      for (int d = 0; d < state_.ranks(); ++d)
        for (const int r : state_.running(d))
          if (!state_.request(r).done() && state_.request(r).sampled >= 1) running.push_back(r);
      if (!running.empty()) state_.abort(running[rng_.below(running.size())]);
    }
  }

  // Where an aborted request still runs the step the abort reaches it in: a decoding request of
  // this step that the step does not finish.
  void abort_in_step() {
    if (!rng_.chance(10)) return;
    std::vector<int> running;
    for (const Work& w : state_.current().run) {
      const SimRequest& q = state_.request(w.req);
      if (w.kind != Work::Kind::extend && !q.done() && q.sampled < q.target) running.push_back(w.req);
    }
    if (!running.empty()) state_.abort(running[rng_.below(running.size())], /*in_step=*/true);
  }

  // An aborted request is sometimes sent again: the resume prompts with what it had.
  void resume_aborted(int n) {
    const int count = state_.request_count();
    for (int r = 0; r < count; ++r) {
      const SimRequest& q = state_.request(r);
      if (!q.aborted || q.finished_at != n || q.sampled < 1 || !rng_.chance(35)) continue;
      const int64_t len = q.known();
      const int64_t room = std::min<int64_t>(limits_.max_outputs, longest_ - len);
      if (room < min_outputs(rules_) || count >= limits_.max_requests + 2) continue;
      const std::vector<int32_t>& tokens = state_.tokens(r);
      Planned p = plan_outputs(rng_, std::vector<int32_t>(tokens.begin(), tokens.begin() + len), min_outputs(rules_), room,
                               rules_.prefill_only);
      p.sim.dp = q.dp;
      p.arrival = n + 1 + static_cast<int>(rng_.range(0, 1));
      p.resume_of = r;
      add(std::move(p));
    }
  }

  void write_requests() {
    t_.requests.clear();
    for (int r = 0; r < state_.request_count(); ++r) {
      const SimRequest& q = state_.request(r);
      const std::vector<int32_t>& tokens = state_.tokens(r);
      const Planned& plan = plans_[static_cast<size_t>(r)];
      TraceRequest out;
      out.id = r;
      out.dp = q.dp;
      out.prompt.assign(tokens.begin(), tokens.begin() + q.prompt_len);
      // An aborted request keeps what it sampled (nothing when it never started).
      const int64_t kept = q.aborted ? q.sampled : static_cast<int64_t>(tokens.size()) - q.prompt_len;
      out.outputs.assign(tokens.begin() + q.prompt_len, tokens.begin() + q.prompt_len + kept);
      out.finish = q.aborted ? Finish::abort : q.finish;
      if (q.aborted || q.finish != Finish::length || q.max_new == 0) out.max_new = q.max_new;
      out.start_len = plan.start_len;
      // One that never arrived (held back for a flush the trace ended at) arrives after it.
      const int arrival = q.arrived ? plan.arrival : std::max(plan.arrival, static_cast<int>(t_.steps.size()));
      if (arrival > 0) out.arrival = arrival;
      out.resume_of = plan.resume_of;
      t_.requests.push_back(std::move(out));
    }
  }

  Rng& rng_;
  const TraceDrawLimits& limits_;
  const EngineTraceDraw& part_;
  Trace& t_;
  TraceDrawRules rules_;
  SchedulerState state_;
  std::unique_ptr<TraceScheduler> scheduler_;
  std::vector<Planned> plans_;  // every request's plan, by id
  std::optional<Update> update_;
  int64_t longest_ = 1;
  int hold_from_ = 0;  // with a flushing update pending, requests from this id on wait for it
};

// A hash of what the simulation drew (requests and steps), to seed the copies' own source.
uint64_t fingerprint(const Trace& t) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](int64_t v) {
    h ^= static_cast<uint64_t>(v);
    h *= 0x100000001b3ull;
  };
  mix(t.dp);
  mix(t.config.token_budget);
  for (const TraceRequest& r : t.requests) {
    for (const int32_t token : r.prompt) mix(token);
    mix(-1);
    for (const int32_t token : r.outputs) mix(token);
    mix(-2);
  }
  for (const TraceStep& s : t.steps) {
    for (const TraceEvent& e : s.events) mix((static_cast<int64_t>(e.kind) << 32) ^ e.req ^ (e.len << 8));
    for (const Work& w : s.run) mix((static_cast<int64_t>(w.kind) << 48) ^ (int64_t{w.req} << 32) ^ (w.lo << 16) ^ w.hi);
    mix(-3);
  }
  return h;
}

// A given request as the simulation plans it: its tokens, finish and arrival kept.
Planned plan_given(const TraceRequest& r, const Trace& t) {
  Planned p;
  p.sim.prompt_len = static_cast<int64_t>(r.prompt.size());
  p.sim.dp = r.dp % t.dp;
  p.sim.finish = r.finish == Finish::abort ? Finish::length : r.finish;
  p.sim.max_new = r.max_new_or_default();
  p.sim.target = p.sim.max_new == 0 ? 1 : static_cast<int64_t>(r.outputs.size());
  p.tokens = r.prompt;
  p.tokens.insert(p.tokens.end(), r.outputs.begin(), r.outputs.end());
  p.start_len = r.start_len;
  p.arrival = r.arrival.value_or(0);
  return p;
}

Result<Trace> simulate(Rng& rng, Profile profile, const TraceDrawLimits& limits,
                       const std::vector<TraceRequest>* given) {
  R3_TRY_STATUS(check_limits(limits));
  R3_TRY(const Engine engine, pick_engine(rng, profile));
  const EngineTraceDraw& part = *engine_trace_draw(engine);
  Trace t;
  t.engine = engine;
  t.profile = profile;
  draw_shape(rng, limits, t);
  part.draw_config(rng, profile, limits, t);
  std::vector<Planned> plan;
  if (given == nullptr) {
    plan = plan_requests(rng, limits, t, part.rules(t));
  } else {
    for (const TraceRequest& r : *given) plan.push_back(plan_given(r, t));
  }
  const int64_t longest = longest_request(plan);
  draw_kv(rng, longest, t.config);
  Simulation(rng, limits, part, t, std::move(plan), longest).run();

  const std::string where = "draw_trace (profile " + std::string(profile.name()) + ", engine " + std::string(engine.name()) + ")";
  auto timeline = validate_trace(t);
  if (!timeline.ok()) return Error{where + ": the drawn trace is invalid: " + timeline.error().message};
  // The completion order of the copies to host, from a source of its own seeded by the trace, so
  // that `rng` draws the same traces after this one as it did before the record existed.
  Rng copies_rng(fingerprint(t));
  part.draw_copies(copies_rng, part.copy_window(t, *timeline), t);
  if (!t.copies.empty()) {
    timeline = validate_trace(t);
    if (!timeline.ok()) return Error{where + ": the drawn copies record is invalid: " + timeline.error().message};
  }
  if (Status inside = lifecycle_of(engine)->check_profile(t, *timeline, profile); !inside.ok())
    return Error{where + ": the drawn trace lies outside the profile: " + inside.error().message};
  return t;
}

}  // namespace

void draw_copies_within(Rng& rng, const CopyWindow& window, Trace& t) {
  t.copies.clear();
  const int steps = static_cast<int>(std::min(window.latest.size(), t.steps.size()));
  bool any = false;
  for (int s = 0; s < steps; ++s) any = any || window.latest[static_cast<size_t>(s)] > s + 1;
  if (!any) return;
  const uint64_t mode = rng.below(5);  // 0: every copy as late as allowed; 1, 2: some; 3, 4: none
  if (mode >= 3) return;
  for (int s = 0; s < steps; ++s) {
    const int latest = window.latest[static_cast<size_t>(s)];
    if (latest <= s + 1) continue;
    if (mode == 0) {
      t.copies.push_back({s, latest});
    } else if (rng.chance(40)) {
      t.copies.push_back({s, static_cast<int>(rng.range(s + 2, latest))});
    }
  }
}

Result<Trace> draw_trace(Rng& rng, Profile profile, const TraceDrawLimits& limits) {
  return simulate(rng, profile, limits, nullptr);
}

Result<Trace> schedule_requests(Rng& rng, Profile profile, const std::vector<TraceRequest>& requests,
                                const TraceDrawLimits& limits) {
  if (requests.empty()) return Error{"no request to schedule"};
  return simulate(rng, profile, limits, &requests);
}

}  // namespace r3
