#include "fuzz/shrink/trace_shrink.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"

namespace r3 {
namespace {

// ---- Edits: each returns a changed copy; validation judges whether the copy is still a trace.

bool names_request(const TraceEvent& e) { return e.kind != TraceEvent::Kind::weight_update; }

// The positions a request holds KV for once `w` has run (timeline.hpp's walk).
int64_t held_after(const Work& w) {
  switch (w.kind) {
    case Work::Kind::extend: return w.hi;
    case Work::Kind::decode: return w.lo + 1;
    case Work::Kind::verify: return w.lo + w.accepted + 1;
  }
  return w.hi;
}

// The tokens `w` samples for a request with `prompt` prompt tokens and `sampled` tokens so far.
int64_t samples(const Work& w, int64_t prompt, int64_t sampled) {
  switch (w.kind) {
    case Work::Kind::extend: return w.hi == prompt + sampled ? 1 : 0;
    case Work::Kind::decode: return 1;
    case Work::Kind::verify: return w.accepted + 1;
  }
  return 0;
}

// Removes step k. An arrival names a step, so those past k move down with it; so do the copies
// record's steps (step k's own entry goes), and an entry that comes out in order is left out.
void erase_step(Trace& t, size_t k) {
  t.steps.erase(t.steps.begin() + static_cast<std::ptrdiff_t>(k));
  for (TraceRequest& r : t.requests) {
    if (r.arrival && *r.arrival > static_cast<int>(k)) --*r.arrival;
  }
  std::vector<CopyCompletion> copies;
  for (CopyCompletion c : t.copies) {
    if (c.step == static_cast<int>(k)) continue;
    if (c.step > static_cast<int>(k)) --c.step;
    if (c.done_before_step > static_cast<int>(k)) --c.done_before_step;
    if (c.done_before_step > c.step + 1) copies.push_back(c);
  }
  t.copies = std::move(copies);
}

// A step with neither events nor work does nothing; an edit that leaves one drops it.
void erase_empty_steps(Trace& t) {
  for (size_t k = t.steps.size(); k-- > 0;) {
    if (t.steps[k].events.empty() && t.steps[k].run.empty()) erase_step(t, k);
  }
}

// Where the first work entry of `req` in step `from` or later lies: (step, index in its run).
std::optional<std::pair<size_t, size_t>> first_work(const Trace& t, int req, size_t from) {
  for (size_t k = from; k < t.steps.size(); ++k) {
    for (size_t j = 0; j < t.steps[k].run.size(); ++j) {
      if (t.steps[k].run[j].req == req) return std::pair{k, j};
    }
  }
  return std::nullopt;
}

// The positions `req` holds before step `step`'s events.
int64_t held_before(const Trace& t, int req, size_t step) {
  int64_t held = 0;
  for (size_t k = 0; k < step && k < t.steps.size(); ++k) {
    for (const TraceEvent& e : t.steps[k].events) {
      if (!names_request(e) || e.req != req) continue;
      if (e.kind == TraceEvent::Kind::hit) held = e.len;
      if (e.kind == TraceEvent::Kind::preempt) held = 0;
    }
    for (const Work& w : t.steps[k].run) {
      if (w.req == req) held = held_after(w);
    }
  }
  return held;
}

// Request `id` gone, with its work and events; later ids (and every reference to them) move
// down by one. A request that resumed it becomes a plain request with the same prompt.
Trace without_request(const Trace& t, int id) {
  Trace c = t;
  c.requests.erase(c.requests.begin() + id);
  auto renumber = [id](int& req) {
    if (req > id) --req;
  };
  for (TraceRequest& r : c.requests) {
    renumber(r.id);
    if (r.resume_of && *r.resume_of == id) {
      r.resume_of.reset();
    } else if (r.resume_of) {
      renumber(*r.resume_of);
    }
  }
  for (TraceStep& s : c.steps) {
    std::erase_if(s.run, [id](const Work& w) { return w.req == id; });
    std::erase_if(s.events, [id](const TraceEvent& e) { return names_request(e) && e.req == id; });
    for (Work& w : s.run) renumber(w.req);
    for (TraceEvent& e : s.events) {
      if (names_request(e)) renumber(e.req);
    }
  }
  erase_empty_steps(c);
  return c;
}

// Event `i` of step `s` gone, with the edit that keeps its request's positions in line: without
// its hit a request extends from 0; without its preempt the recompute starts where the request
// stood; an offload goes with the request's next restore.
Trace without_event(const Trace& t, size_t s, size_t i) {
  Trace c = t;
  const TraceEvent e = c.steps[s].events[i];
  c.steps[s].events.erase(c.steps[s].events.begin() + static_cast<std::ptrdiff_t>(i));
  const auto at = names_request(e) ? first_work(c, e.req, s) : std::nullopt;
  Work* w = at ? &c.steps[at->first].run[at->second] : nullptr;
  if (e.kind == TraceEvent::Kind::hit) {
    if (w && w->kind == Work::Kind::extend && w->lo == e.len) w->lo = 0;
  } else if (e.kind == TraceEvent::Kind::preempt) {
    if (w && w->kind == Work::Kind::extend && w->lo == 0) {
      w->lo = held_before(t, e.req, s);
      auto& run = c.steps[at->first].run;
      if (w->lo >= w->hi) run.erase(run.begin() + static_cast<std::ptrdiff_t>(at->second));
    }
  } else if (e.kind == TraceEvent::Kind::offload) {
    bool found = false;
    for (size_t k = s; k < c.steps.size() && !found; ++k) {
      auto& events = c.steps[k].events;
      for (size_t j = k == s ? i : 0; j < events.size(); ++j) {
        if (events[j].kind != TraceEvent::Kind::restore || events[j].req != e.req) continue;
        events.erase(events.begin() + static_cast<std::ptrdiff_t>(j));
        found = true;
        break;
      }
    }
  }
  erase_empty_steps(c);
  return c;
}

// The extend at run[j] of step k folded into the same request's previous extend, when that one
// ends where it starts and no event of the request lies between them.
std::optional<Trace> merged_extend(const Trace& t, size_t k, size_t j) {
  const Work& w = t.steps[k].run[j];
  if (w.kind != Work::Kind::extend) return std::nullopt;
  for (size_t p = k; p-- > 0;) {
    for (const TraceEvent& e : t.steps[p + 1].events) {
      if (names_request(e) && e.req == w.req) return std::nullopt;
    }
    const auto& run = t.steps[p].run;
    for (size_t q = run.size(); q-- > 0;) {
      if (run[q].req != w.req) continue;
      if (run[q].kind != Work::Kind::extend || run[q].hi != w.lo) return std::nullopt;
      Trace c = t;
      c.steps[p].run[q].hi = w.hi;
      c.steps[k].run.erase(c.steps[k].run.begin() + static_cast<std::ptrdiff_t>(j));
      erase_empty_steps(c);
      return c;
    }
  }
  return std::nullopt;
}

// Request `id` with its last output gone: it now finishes at the step that sampled the output
// before, so its work and events after that step go too.
std::optional<Trace> with_one_output_less(const Trace& t, int id) {
  const TraceRequest& r = t.requests[id];
  if (r.finish == Finish::abort || r.outputs.size() < 2 || r.max_new == 0) return std::nullopt;
  const auto prompt = static_cast<int64_t>(r.prompt.size());
  const auto target = static_cast<int64_t>(r.outputs.size()) - 1;
  int64_t sampled = 0;
  std::optional<size_t> last;
  for (size_t k = 0; k < t.steps.size() && !last; ++k) {
    for (const TraceEvent& e : t.steps[k].events) {
      // The prefill instance samples the first token (timeline.hpp).
      if (e.kind == TraceEvent::Kind::pd_handoff && e.req == id && sampled == 0) sampled = 1;
    }
    for (const Work& w : t.steps[k].run) {
      if (w.req == id) sampled += samples(w, prompt, sampled);
    }
    if (sampled > target) return std::nullopt;  // a verify sampled past it: no step ends there
    if (sampled == target) last = k;
  }
  // A request the trace leaves unfinished keeps all its work. Under overlap, the decode right
  // after the new finish (the one that sampled the dropped output) stays as its lagging row.
  const int64_t lagging_at = prompt + target - 1;
  Trace c = t;
  for (size_t k = last ? *last + 1 : c.steps.size(); k < c.steps.size(); ++k) {
    const bool lag_step = t.config.overlap && k == *last + 1;
    std::erase_if(c.steps[k].run, [&](const Work& w) {
      return w.req == id && !(lag_step && w.kind == Work::Kind::decode && w.lo == lagging_at);
    });
    std::erase_if(c.steps[k].events, [id](const TraceEvent& e) { return names_request(e) && e.req == id; });
  }
  TraceRequest& cr = c.requests[id];
  cr.outputs.pop_back();
  if (cr.max_new) --*cr.max_new;
  erase_empty_steps(c);
  return c;
}

// Hit `i` of step `s` one position shorter; its request extends from one position earlier.
std::optional<Trace> with_hit_shortened(const Trace& t, size_t s, size_t i) {
  const TraceEvent& e = t.steps[s].events[i];
  if (e.kind != TraceEvent::Kind::hit || e.len < 2) return std::nullopt;
  Trace c = t;
  --c.steps[s].events[i].len;
  if (const auto at = first_work(c, e.req, s)) {
    Work& w = c.steps[at->first].run[at->second];
    if (w.kind == Work::Kind::extend && w.lo == e.len) --w.lo;
  }
  return c;
}

// Request `id` without its last prompt token: its positions past the cut move down by one (an
// extend left empty goes), and a start_len past the new prompt comes back to it.
std::optional<Trace> with_prompt_cut(const Trace& t, int id) {
  if (t.requests[id].prompt.size() < 2) return std::nullopt;
  Trace c = t;
  TraceRequest& r = c.requests[id];
  r.prompt.pop_back();
  const auto cut = static_cast<int64_t>(r.prompt.size());
  r.start_len = std::min(r.start_len, cut);
  for (TraceStep& s : c.steps) {
    for (Work& w : s.run) {
      if (w.req != id) continue;
      if (w.lo > cut) --w.lo;
      if (w.hi > cut) --w.hi;
    }
    std::erase_if(s.run, [id](const Work& w) { return w.req == id && w.kind == Work::Kind::extend && w.lo >= w.hi; });
  }
  erase_empty_steps(c);
  return c;
}

bool any_work(const Trace& t, Work::Kind kind) {
  for (const TraceStep& s : t.steps) {
    for (const Work& w : s.run) {
      if (w.kind == kind) return true;
    }
  }
  return false;
}

bool any_event(const Trace& t, TraceEvent::Kind kind) {
  for (const TraceStep& s : t.steps) {
    for (const TraceEvent& e : s.events) {
      if (e.kind == kind) return true;
    }
  }
  return false;
}

bool any_lagging_row(const Timeline& timeline) {
  for (const StepView& step : timeline.steps) {
    for (const auto& rank : step.rows) {
      for (const BatchRow& row : rank) {
        if (row.lagging) return true;
      }
    }
  }
  return false;
}

// Token ids renumbered 1, 2, ... in order of first appearance (prompts, then outputs, request by
// request). A bijection: equal tokens stay equal, so every shared prefix stays shared.
Trace with_tokens_relabelled(const Trace& t) {
  Trace c = t;
  std::map<int32_t, int32_t> label;
  auto relabel = [&label](int32_t& token) {
    auto [it, added] = label.try_emplace(token, static_cast<int32_t>(label.size()) + 1);
    token = it->second;
  };
  for (TraceRequest& r : c.requests) {
    for (int32_t& token : r.prompt) relabel(token);
    for (int32_t& token : r.outputs) relabel(token);
  }
  return c;
}

// ---- Passes: each appends its candidates, most-reducing first.

using Candidates = std::vector<Trace>;

struct TracePass {
  std::string_view name;
  void (*propose)(const Trace& t, const Timeline& timeline, Candidates& out);
};

void drop_requests(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t i = 0; i < t.requests.size(); ++i) out.push_back(without_request(t, static_cast<int>(i)));
}

void drop_events(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t s = 0; s < t.steps.size(); ++s) {
    for (size_t i = 0; i < t.steps[s].events.size(); ++i) out.push_back(without_event(t, s, i));
  }
}

void drop_steps(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t k = 0; k < t.steps.size(); ++k) {
    Trace c = t;
    erase_step(c, k);
    out.push_back(std::move(c));
  }
}

// Mostly a lagging row, or the work of a request that needs it no more.
void drop_work(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t s = 0; s < t.steps.size(); ++s) {
    for (size_t j = 0; j < t.steps[s].run.size(); ++j) {
      Trace c = t;
      c.steps[s].run.erase(c.steps[s].run.begin() + static_cast<std::ptrdiff_t>(j));
      erase_empty_steps(c);
      out.push_back(std::move(c));
    }
  }
}

// The copies record toward in order: an entry dropped (that copy in order), then one landing a
// step sooner (an entry that reaches in order is left out).
void drop_copies(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t i = 0; i < t.copies.size(); ++i) {
    Trace c = t;
    c.copies.erase(c.copies.begin() + static_cast<std::ptrdiff_t>(i));
    out.push_back(std::move(c));
  }
}

void earlier_copies(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t i = 0; i < t.copies.size(); ++i) {
    if (t.copies[i].done_before_step <= t.copies[i].step + 2) continue;  // one sooner is in order: drop_copies
    Trace c = t;
    --c.copies[i].done_before_step;
    out.push_back(std::move(c));
  }
}

void merge_extends(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t k = 1; k < t.steps.size(); ++k) {
    for (size_t j = 0; j < t.steps[k].run.size(); ++j) {
      if (auto c = merged_extend(t, k, j)) out.push_back(std::move(*c));
    }
  }
}

void shorten_outputs(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t i = 0; i < t.requests.size(); ++i) {
    if (auto c = with_one_output_less(t, static_cast<int>(i))) out.push_back(std::move(*c));
  }
}

void shorten_hits(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t s = 0; s < t.steps.size(); ++s) {
    for (size_t i = 0; i < t.steps[s].events.size(); ++i) {
      if (auto c = with_hit_shortened(t, s, i)) out.push_back(std::move(*c));
    }
  }
}

void shorten_prompts(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t i = 0; i < t.requests.size(); ++i) {
    if (auto c = with_prompt_cut(t, static_cast<int>(i))) out.push_back(std::move(*c));
  }
}

// The engine features the trace does not need, each to its plain (default) value.
void plain_config(const Trace& t, const Timeline& timeline, Candidates& out) {
  const TraceConfig plain;
  auto propose = [&](auto edit) {
    Trace c = t;
    edit(c.config);
    out.push_back(std::move(c));
  };
  if (t.config.spec && !any_work(t, Work::Kind::verify)) propose([](TraceConfig& c) { c.spec.reset(); });
  if (t.config.overlap && !any_lagging_row(timeline)) {
    // Without overlap scheduling no engine lets a copy land late: the record goes with it.
    Trace c = t;
    c.config.overlap = false;
    c.copies.clear();
    out.push_back(std::move(c));
  }
  if (!t.config.cuda_graph_decode.empty()) propose([](TraceConfig& c) { c.cuda_graph_decode.clear(); });
  if (t.config.prefix_cache && !any_event(t, TraceEvent::Kind::hit)) {
    propose([](TraceConfig& c) { c.prefix_cache = false; });
  }
  if (t.config.chunk != plain.chunk) propose([&](TraceConfig& c) { c.chunk = plain.chunk; });
  if (t.config.page != plain.page) propose([&](TraceConfig& c) { c.page = plain.page; });
  if (t.config.kv_slots != plain.kv_slots) propose([&](TraceConfig& c) { c.kv_slots = plain.kv_slots; });
}

// Each request's fields to their plain values: finish length (through the same outputs), no
// explicit max_new, start_len 0, no arrival step.
void plain_requests(const Trace& t, const Timeline&, Candidates& out) {
  for (size_t i = 0; i < t.requests.size(); ++i) {
    const TraceRequest& r = t.requests[i];
    auto propose = [&](auto edit) {
      Trace c = t;
      edit(c.requests[i]);
      out.push_back(std::move(c));
    };
    if (r.finish == Finish::eos || r.finish == Finish::stop) {
      propose([](TraceRequest& q) {
        q.finish = Finish::length;
        q.max_new.reset();
      });
    }
    if (r.max_new) propose([](TraceRequest& q) { q.max_new.reset(); });
    if (r.start_len != 0) propose([](TraceRequest& q) { q.start_len = 0; });
    if (r.arrival) propose([](TraceRequest& q) { q.arrival.reset(); });
  }
}

// DP 1 with every request on rank 0 (the step budget then holds every rank's rows), one rank
// fewer (the last rank's requests to rank 0), one request to rank 0; TP 1, then half.
void lower_parallelism(const Trace& t, const Timeline&, Candidates& out) {
  auto with_dp = [&](int dp, auto moved) {
    Trace c = t;
    c.dp = dp;
    for (TraceRequest& r : c.requests) {
      if (moved(r)) r.dp = 0;
    }
    out.push_back(std::move(c));
  };
  if (t.dp > 1) with_dp(1, [](const TraceRequest&) { return true; });
  if (t.dp > 2) with_dp(t.dp - 1, [&](const TraceRequest& r) { return r.dp == t.dp - 1; });
  for (size_t i = 0; i < t.requests.size(); ++i) {
    if (t.requests[i].dp > 0) with_dp(t.dp, [&](const TraceRequest& r) { return r.id == t.requests[i].id; });
  }
  auto with_tp = [&](int tp) {
    Trace c = t;
    c.tp = tp;
    out.push_back(std::move(c));
  };
  if (t.tp > 1) with_tp(1);
  if (t.tp / 2 > 1) with_tp(t.tp / 2);
}

void drop_knobs(const Trace& t, const Timeline&, Candidates& out) {
  for (const auto& [key, value] : t.knobs) {
    Trace c = t;
    c.knobs.erase(key);
    out.push_back(std::move(c));
  }
}

void shrink_model(const Trace& t, const Timeline&, Candidates& out) {
  auto propose = [&](auto edit) {
    Trace c = t;
    edit(c.model);
    out.push_back(std::move(c));
  };
  if (t.model.layers > 1) propose([](ModelShape& m) { m.layers = 1; });
  if (t.model.top_k > 1) propose([](ModelShape& m) { m.top_k = 1; });
  if (t.model.experts > t.model.top_k) propose([](ModelShape& m) { m.experts = m.top_k; });
}

void lower_tokens(const Trace& t, const Timeline&, Candidates& out) { out.push_back(with_tokens_relabelled(t)); }

constexpr TracePass kPasses[] = {
    {"drop request", drop_requests},
    {"drop event", drop_events},
    {"drop step", drop_steps},
    {"drop work", drop_work},
    {"drop copy", drop_copies},
    {"earlier copy", earlier_copies},
    {"merge extends", merge_extends},
    {"shorten outputs", shorten_outputs},
    {"shorten hits", shorten_hits},
    {"shorten prompt", shorten_prompts},
    {"plain config", plain_config},
    {"plain requests", plain_requests},
    {"lower parallelism", lower_parallelism},
    {"drop knob", drop_knobs},
    {"shrink model", shrink_model},
    {"lower tokens", lower_tokens},
};

// ---- The driver.

// The timeline of `t` when it is a trace the engine of `profile` runs.
std::optional<Timeline> admitted(const Trace& t, Profile profile) {
  Result<Timeline> timeline = validate_trace(t);
  if (!timeline.ok()) return std::nullopt;
  const LifecycleModel* model = lifecycle_of(t.engine);
  if (model == nullptr || !model->check_profile(t, *timeline, profile).ok()) return std::nullopt;
  return std::move(timeline).value();
}

class TraceShrinker {
 public:
  TraceShrinker(Profile profile, const std::function<bool(const Trace&)>& still_fails, int max_attempts,
                TraceShrinkResult& result, Timeline timeline)
      : profile_(profile),
        still_fails_(still_fails),
        max_attempts_(max_attempts),
        result_(result),
        timeline_(std::move(timeline)) {}

  void run() {
    for (bool changed = true; changed;) {
      changed = false;
      for (const TracePass& pass : kPasses) {
        while (reduce_once(pass)) changed = true;
        if (stopped_) return;
      }
    }
  }

 private:
  // Tries the pass's candidates in order; keeps the first that is admitted and still fails.
  bool reduce_once(const TracePass& pass) {
    Candidates candidates;
    pass.propose(result_.trace, timeline_, candidates);
    for (Trace& candidate : candidates) {
      if (candidate == result_.trace || refused(candidate)) continue;
      if (result_.attempts >= max_attempts_) {
        stopped_ = true;
        return false;
      }
      ++result_.attempts;
      std::optional<Timeline> timeline = admitted(candidate, profile_);
      if (!timeline || !still_fails_(candidate)) {
        refused_.push_back(std::move(candidate));
        continue;
      }
      ++result_.accepted;
      result_.trace = std::move(candidate);
      timeline_ = std::move(*timeline);
      return true;
    }
    return false;
  }

  // Candidates are small and few (max_attempts bounds them), so a list compared whole will do.
  bool refused(const Trace& candidate) const {
    for (const Trace& t : refused_) {
      if (t == candidate) return true;
    }
    return false;
  }

  Profile profile_;
  const std::function<bool(const Trace&)>& still_fails_;
  int max_attempts_;
  TraceShrinkResult& result_;
  Timeline timeline_;
  std::vector<Trace> refused_;
  bool stopped_ = false;
};

}  // namespace

TraceShrinkResult shrink_trace(const Trace& failing, Profile profile,
                               const std::function<bool(const Trace&)>& still_fails, int max_attempts) {
  TraceShrinkResult result{failing};
  std::optional<Timeline> timeline = admitted(failing, profile);
  if (!timeline) return result;
  result.trace.note.clear();
  result.trace.expect.reset();
  TraceShrinker(profile, still_fails, max_attempts, result, std::move(*timeline)).run();
  return result;
}

}  // namespace r3
