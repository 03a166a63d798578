#include "fuzz/exhaust/trace_space.hpp"

#include <functional>
#include <vector>

#include "fuzz/generate/engine_trace_draw.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3 {
namespace {

// What the search knows of a request while it lays out steps (the timeline's walk, from the
// scheduler's side: timeline.hpp). Proposals only: each step is checked by validate_trace.
struct Progress {
  int64_t computed = 0;
  int64_t sampled = 0;
  bool done = false;
};

// One request's part in a step: its event (none, a hit of `hit` positions, a preemption) and work.
struct Move {
  enum class Event : uint8_t { none, hit, preempt } event = Event::none;
  int64_t hit = 0;
  std::optional<Work> work;
};

class Search {
 public:
  Search(const TraceImplementation& impl, Profile profile, const TraceSpaceBounds& bounds)
      : impl_(impl), profile_(profile), bounds_(bounds) {
    t_.engine = impl.engine;
    t_.profile = profile;
    t_.model = {1, 1, 1};
    t_.config.token_budget = 4;
    t_.config.page = 1;
    t_.config.kv_slots = 64;
    t_.config.prefix_cache = true;
    t_.config.overlap = bounds.copy_orders;
    for (int len = 1; len <= bounds.max_prompt; ++len) add_prompts(len, {});
  }

  TraceExhaustResult run() {
    for (int n = 1; n <= bounds_.max_requests && !out_.counterexample; ++n) requests(n);
    return out_;
  }

 private:
  void add_prompts(int len, std::vector<int32_t> prefix) {
    if (static_cast<int>(prefix.size()) == len) {
      prompts_.push_back(prefix);
      return;
    }
    for (int32_t token : {1, 2}) {
      prefix.push_back(token);
      add_prompts(len, prefix);
      prefix.pop_back();
    }
  }

  void requests(int n) {
    if (static_cast<int>(t_.requests.size()) == n) {
      progress_.assign(static_cast<size_t>(n), Progress{});
      steps(0);
      return;
    }
    for (const std::vector<int32_t>& prompt : prompts_)
      for (int outputs = 1; outputs <= bounds_.max_outputs && !out_.counterexample; ++outputs) {
        TraceRequest r;
        r.id = static_cast<int>(t_.requests.size());
        r.prompt = prompt;
        for (int k = 0; k < outputs; ++k) r.outputs.push_back(3 + k);
        t_.requests.push_back(std::move(r));
        requests(n);
        t_.requests.pop_back();
      }
  }

  // The moves request r can propose now.
  std::vector<Move> moves_of(size_t r) const {
    const Progress& p = progress_[r];
    std::vector<Move> out{Move{}};
    if (p.done) return out;
    const int64_t P = static_cast<int64_t>(t_.requests[r].prompt.size());
    const int64_t known = P + p.sampled;
    std::vector<Move> events{Move{}};
    if (p.computed == 0)
      for (int64_t len = 1; len < known; ++len) events.push_back(Move{Move::Event::hit, len, std::nullopt});
    if (p.computed > 0) events.push_back(Move{Move::Event::preempt, 0, std::nullopt});
    for (const Move& e : events) {
      const int64_t c = e.event == Move::Event::hit ? e.hit : e.event == Move::Event::preempt ? 0 : p.computed;
      if (e.event != Move::Event::none) out.push_back(e);  // the event alone
      const int req = static_cast<int>(r);
      if (c + 1 <= known) {
        Move m = e;
        m.work = Work{Work::Kind::extend, req, c, c + 1, 0};
        out.push_back(m);
      }
      if (known > c + 1) {
        Move m = e;
        m.work = Work{Work::Kind::extend, req, c, known, 0};
        out.push_back(m);
      }
      if (p.sampled > 0 && c == known - 1) {
        Move m = e;
        m.work = Work{Work::Kind::decode, req, c, c + 1, 0};
        out.push_back(m);
      }
    }
    return out;
  }

  void steps(int depth) {
    if (out_.counterexample) return;
    if (depth > 0) {
      const Result<Timeline> timeline = validate_trace(t_);
      if (!timeline) return;  // a prefix that breaks a rule: nothing below it is valid
      ++out_.visited;
      bool finished = true;
      for (const RequestView& v : timeline->requests) finished = finished && v.finish_step >= 0;
      if (finished && impl_.model->check_profile(t_, *timeline, profile_).ok()) {
        judge_orders(*timeline);
        return;  // every request finished: nothing more to schedule
      }
    }
    if (depth == bounds_.max_steps) return;
    std::vector<std::vector<Move>> options;
    for (size_t r = 0; r < t_.requests.size(); ++r) options.push_back(moves_of(r));
    std::vector<Move> chosen(options.size());
    for (const bool update : {false, true}) {
      if (update && updated_) continue;
      choose(0, options, chosen, update, depth);
    }
  }

  void judge(const Timeline& timeline) {
    ++out_.judged;
    if (!t_.copies.empty()) ++out_.late_orders;
    const TraceJudgement j = judge_trace(impl_, t_, timeline);
    if (j.verdict == TraceVerdict::pass) return;
    out_.counterexample = t_;
    out_.detail = std::string(to_string(j.verdict)) + ": " + j.detail;
  }

  // Every completion order the engine's window allows (in order only without copy_orders).
  void judge_orders(const Timeline& timeline) {
    const EngineTraceDraw* part = bounds_.copy_orders ? engine_trace_draw(impl_.engine) : nullptr;
    if (part == nullptr) {
      judge(timeline);
      return;
    }
    const CopyWindow window = part->copy_window(t_, timeline);
    std::vector<int> late;  // the steps whose copy may land late
    for (size_t s = 0; s < window.latest.size(); ++s)
      if (window.latest[s] > static_cast<int>(s) + 1) late.push_back(static_cast<int>(s));
    orders(0, late, window, timeline);
    t_.copies.clear();
  }

  void orders(size_t i, const std::vector<int>& late, const CopyWindow& window, const Timeline& timeline) {
    if (out_.counterexample) return;
    if (i == late.size()) {
      judge(timeline);
      return;
    }
    const int s = late[i];
    orders(i + 1, late, window, timeline);  // in order
    for (int d = s + 2; d <= window.latest[static_cast<size_t>(s)] && !out_.counterexample; ++d) {
      t_.copies.push_back({s, d});
      orders(i + 1, late, window, timeline);
      if (!out_.counterexample) t_.copies.pop_back();
    }
  }

  void choose(size_t r, const std::vector<std::vector<Move>>& options, std::vector<Move>& chosen, bool update, int depth) {
    if (out_.counterexample) return;
    if (r < options.size()) {
      for (const Move& m : options[r]) {
        chosen[r] = m;
        choose(r + 1, options, chosen, update, depth);
      }
      return;
    }
    TraceStep step;
    if (update) step.events.push_back({TraceEvent::Kind::weight_update, -1, 0, 1, false});
    for (size_t q = 0; q < chosen.size(); ++q) {
      if (chosen[q].event == Move::Event::hit) step.events.push_back({TraceEvent::Kind::hit, static_cast<int>(q), chosen[q].hit, 0, false});
      if (chosen[q].event == Move::Event::preempt) step.events.push_back({TraceEvent::Kind::preempt, static_cast<int>(q), 0, 0, false});
      if (chosen[q].work) step.run.push_back(*chosen[q].work);
    }
    if (step.events.empty() && step.run.empty()) return;  // an empty step adds nothing
    const std::vector<Progress> before = progress_;
    for (size_t q = 0; q < chosen.size(); ++q) apply(q, chosen[q]);
    const bool was_updated = updated_;
    updated_ = updated_ || update;
    t_.steps.push_back(std::move(step));
    steps(depth + 1);
    t_.steps.pop_back();
    updated_ = was_updated;
    progress_ = before;
  }

  void apply(size_t r, const Move& m) {
    Progress& p = progress_[r];
    if (m.event == Move::Event::hit) p.computed = m.hit;
    if (m.event == Move::Event::preempt) p.computed = 0;
    if (!m.work) return;
    const int64_t P = static_cast<int64_t>(t_.requests[r].prompt.size());
    if (m.work->hi == P + p.sampled) ++p.sampled;
    p.computed = m.work->hi;
    p.done = p.sampled >= static_cast<int64_t>(t_.requests[r].outputs.size());
  }

  const TraceImplementation& impl_;
  Profile profile_;
  TraceSpaceBounds bounds_;
  std::vector<std::vector<int32_t>> prompts_;
  Trace t_;
  std::vector<Progress> progress_;
  bool updated_ = false;
  TraceExhaustResult out_;
};

}  // namespace

Result<TraceExhaustResult> exhaust_traces(const TraceImplementation& impl, Profile profile, const TraceSpaceBounds& b) {
  const std::pair<const char*, std::pair<int, int>> checks[] = {{"max-requests", {b.max_requests, 3}},
                                                               {"max-steps", {b.max_steps, 5}},
                                                               {"max-prompt", {b.max_prompt, 3}},
                                                               {"max-outputs", {b.max_outputs, 3}}};
  for (const auto& [name, value] : checks)
    if (value.first < 1 || value.first > value.second)
      return Error{std::string("--") + name + ": " + std::to_string(value.first) + " is outside [1, " +
                   std::to_string(value.second) + "] (the space grows too fast beyond)"};
  return Search(impl, profile, b).run();
}

}  // namespace r3
