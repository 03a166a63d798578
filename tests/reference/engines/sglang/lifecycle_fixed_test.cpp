// The fixed model's promise (reference/engines/sglang/lifecycle.cpp): on every valid trace SGLang
// runs, sglang-fixed returns the truth (and the trace judge passes it), and upstream with every
// patch applied is sglang-fixed.
// The traces are drawn step by step from a seeded generator; a proposed step stays only when the
// trace so far passes build_timeline, check() and check_profile(), so every trace judged is one
// SGLang runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fuzz/oracle/judge_trace.hpp"
#include "tests/reference/engines/sglang/lifecycle_fixtures.hpp"

namespace r3::test {
namespace {

class Draw {
 public:
  explicit Draw(uint32_t seed) : rng_(seed) {}
  int below(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  bool chance(int percent) { return below(100) < percent; }

 private:
  std::mt19937 rng_;
};

std::optional<Timeline> runs(const Trace& t) {
  Result<Timeline> timeline = validate_trace(t);
  if (!timeline.ok() || !sglang::lifecycle_model().check_profile(t, *timeline, Profile::of(sglang::engine(), 0)).ok())
    return std::nullopt;
  return std::move(timeline).value();
}

Trace draw_config(Draw& d) {
  Trace t = sglang_trace(d.chance(30) ? 2 : 1, 8 + d.below(40));
  t.config.prefix_cache = d.chance(60);
  t.config.overlap = d.chance(30);
  if (d.chance(30)) t.config.spec = SpecConfig{1 + d.below(3), d.chance(50)};
  if (d.chance(30)) t.config.chunk = 2 + d.below(4);
  if (d.chance(30)) t.config.cuda_graph_decode = {2, 4};
  if (t.config.prefix_cache && d.chance(40)) t.knobs["config.hicache"] = "true";
  if (t.config.overlap && d.chance(30)) t.knobs["config.overlap_copy_race"] = "true";
  if (t.config.spec && d.chance(30)) t.knobs["config.spec_algorithm"] = "\"ngram\"";
  if (d.chance(20) && !t.knobs.count("config.spec_algorithm")) t.dp = 2;  // NGRAM refuses DP attention
  if (d.chance(20)) {
    // A P/D decode instance: requests arrive by handoff, retracts offload, mini_lb may splice.
    t.config.prefix_cache = false;
    t.knobs.erase("config.hicache");
    if (d.chance(50)) t.knobs["config.pd_router"] = "\"mini_lb\"";
  }
  const int n = 2 + d.below(4);
  for (int r = 0; r < n; ++r) {
    std::vector<int32_t> prompt, outputs;
    const int p = 2 + d.below(5);
    if (r > 0 && d.chance(60)) {  // an earlier request's prefix, for hits to find
      const std::vector<int32_t>& earlier = t.requests[static_cast<size_t>(d.below(r))].prompt;
      prompt.assign(earlier.begin(), earlier.begin() + std::min<int>(p, static_cast<int>(earlier.size())));
    }
    while (static_cast<int>(prompt.size()) < p) prompt.push_back(1 + d.below(2));  // a small alphabet: prefixes repeat
    const int o = 1 + d.below(4);
    for (int i = 0; i < o; ++i) outputs.push_back(10 + d.below(3));
    TraceRequest req = request(r, prompt, outputs, Finish::length, t.dp > 1 ? d.below(2) : 0);
    if (o == 1 && d.chance(20)) req.max_new = 0;
    if (d.chance(15)) req.finish = Finish::abort;
    if (d.chance(20)) req.start_len = d.below(p + 1);
    t.requests.push_back(req);
  }
  return t;
}

// Where each request stands after the steps so far (the accepted ones, so the timeline's rules
// hold): positions with KV, tokens sampled, and whether it ended.
struct Standing {
  int64_t computed = 0;
  int64_t sampled = 0;
  int ended = -1;  // the step it finished or was aborted at
  bool offloaded = false;
};

// A request drawn among those `fits`, or -1.
template <class Fits>
int pick(Draw& d, const std::vector<Standing>& at, Fits fits) {
  std::vector<int> candidates;
  for (size_t r = 0; r < at.size(); ++r)
    if (fits(at[r])) candidates.push_back(static_cast<int>(r));
  return candidates.empty() ? -1 : candidates[static_cast<size_t>(d.below(static_cast<int>(candidates.size())))];
}

void advance(std::vector<Standing>& at, const TraceStep& s, int n, const StepView& view, const Trace& t) {
  for (const TraceEvent& e : s.events) {
    if (e.kind == TraceEvent::Kind::hit) at[static_cast<size_t>(e.req)].computed = e.len;
    if (e.kind == TraceEvent::Kind::preempt) at[static_cast<size_t>(e.req)].computed = 0;
    if (e.kind == TraceEvent::Kind::offload) at[static_cast<size_t>(e.req)].offloaded = true;
    if (e.kind == TraceEvent::Kind::restore) at[static_cast<size_t>(e.req)].offloaded = false;
    if (e.kind == TraceEvent::Kind::pd_handoff) {
      at[static_cast<size_t>(e.req)].computed =
          static_cast<int64_t>(t.requests[static_cast<size_t>(e.req)].prompt.size());
      at[static_cast<size_t>(e.req)].sampled = 1;
    }
  }
  for (const Work& w : s.run) {
    Standing& r = at[static_cast<size_t>(w.req)];
    if (r.ended >= 0) continue;  // a lagging row
    const int64_t known = static_cast<int64_t>(t.requests[static_cast<size_t>(w.req)].prompt.size()) + r.sampled;
    if (w.kind == Work::Kind::extend) {
      r.computed = w.hi;
      if (w.hi == known) ++r.sampled;
    } else {
      r.computed = w.lo + w.accepted + 1;
      r.sampled += w.accepted + 1;
    }
  }
  for (int r : view.finished) at[static_cast<size_t>(r)].ended = n;
  for (int r : view.aborted_before) at[static_cast<size_t>(r)].ended = n;
}

// One proposed step: perhaps an event, then an extend batch or a decode batch.
TraceStep propose(Draw& d, const Trace& t, const std::vector<Standing>& at, int n, bool pd) {
  TraceStep s;
  const int count = static_cast<int>(t.requests.size());
  const auto fresh = [](const Standing& st) { return st.ended < 0 && st.computed == 0 && st.sampled == 0; };
  const auto running = [](const Standing& st) { return st.ended < 0 && st.computed > 0 && !st.offloaded; };
  if (pd && d.chance(50)) {
    const int kind = d.below(4);
    const int r = kind == 0   ? pick(d, at, fresh)
                  : kind == 1 ? pick(d, at, running)
                  : kind == 2 ? pick(d, at, [](const Standing& st) { return st.offloaded; })
                              : d.below(count);
    const TraceEvent::Kind kinds[] = {TraceEvent::Kind::pd_handoff, TraceEvent::Kind::offload,
                                      TraceEvent::Kind::restore, TraceEvent::Kind::abort};
    if (r >= 0) s.events.push_back(on(kinds[kind], r));
  } else if (d.chance(30)) {
    const int r = d.below(count);
    const int fresh_one = pick(d, at, fresh);
    switch (d.below(5)) {
      case 0:
        if (fresh_one >= 0 && t.config.prefix_cache) {
          // As long a page-aligned prefix as another request on its rank has computed.
          const std::vector<int32_t>& mine = t.requests[static_cast<size_t>(fresh_one)].prompt;
          int64_t best = 0;
          for (size_t o = 0; o < at.size(); ++o) {
            const TraceRequest& other = t.requests[o];
            if (static_cast<int>(o) == fresh_one || other.dp != t.requests[static_cast<size_t>(fresh_one)].dp) continue;
            int64_t shared = 0;
            while (shared < at[o].computed &&
                   shared < static_cast<int64_t>(std::min(mine.size(), other.prompt.size())) &&
                   mine[static_cast<size_t>(shared)] == other.prompt[static_cast<size_t>(shared)])
              ++shared;
            best = std::max(best, std::min<int64_t>(shared, static_cast<int64_t>(mine.size()) - 1));
          }
          best = best / t.config.page * t.config.page;
          if (best > 0) s.events.push_back(hit(fresh_one, best));
        }
        break;
      case 1: s.events.push_back(on(TraceEvent::Kind::preempt, r)); break;
      case 2: s.events.push_back(on(TraceEvent::Kind::abort, r)); break;
      default: s.events.push_back(weights(1 + d.below(3), d.chance(40))); break;
    }
  }
  const bool decoding = pd || d.chance(50);
  for (int r = 0; r < count; ++r) {
    const Standing& st = at[static_cast<size_t>(r)];
    const int64_t known = static_cast<int64_t>(t.requests[static_cast<size_t>(r)].prompt.size()) + st.sampled;
    const bool lag = st.ended == n - 1 && t.config.overlap;
    if ((st.ended >= 0 && !lag) || !d.chance(75)) continue;
    int64_t c = st.computed;
    for (const TraceEvent& e : s.events) {
      if (e.req == r && e.kind == TraceEvent::Kind::hit) c = e.len;
      if (e.req == r && e.kind == TraceEvent::Kind::preempt) c = 0;
    }
    if (decoding && st.sampled > 0 && c == known - 1) {
      if (t.config.spec && !lag)
        s.run.push_back(verify(r, c, d.below(t.config.spec->width + 1)));
      else
        s.run.push_back(decode(r, c));
    } else if (!decoding && c < known && !lag) {
      s.run.push_back(extend(r, c, std::min<int64_t>(known, c + 1 + d.below(4))));
    }
  }
  return s;
}

Trace draw_trace(uint32_t seed) {
  Draw d(seed);
  Trace t = draw_config(d);
  const bool pd = t.knobs.count("config.pd_router") || (!t.config.prefix_cache && d.chance(30));
  if (!runs(t)) return t;
  std::vector<Standing> at(t.requests.size());
  for (int tries = 0; tries < 200 && t.steps.size() < 14; ++tries) {
    const int n = static_cast<int>(t.steps.size());
    t.steps.push_back(propose(d, t, at, n, pd));
    const std::optional<Timeline> timeline = runs(t);
    if (!timeline) {
      t.steps.pop_back();
      continue;
    }
    advance(at, t.steps.back(), n, timeline->steps.back(), t);
  }
  return t;
}

bool same(const Timeline& timeline, const RouteRef& got, const RouteRef& expected) {
  return expected.kind == RouteRef::Kind::route ? timeline.same_route(got, expected) : got == expected;
}

TEST(SglangLifecycleFixed, ReturnsTheTruthOnEveryTraceSglangRuns) {
  int judged = 0, finished = 0, upstream_wrong = 0;
  std::map<std::string, int> seen;  // what the judged traces exercise
  const Result<TraceImplementation> made = make_trace_implementation("sglang-fixed");
  ASSERT_TRUE(made.ok()) << made.error().message;
  const TraceImplementation& fixed_impl = *made;
  for (uint32_t seed = 1; seed <= 1000; ++seed) {
    const Trace t = draw_trace(seed);
    if (t.steps.empty()) continue;
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Timeline timeline = checked_timeline(t);
    for (const TraceStep& s : t.steps) {
      for (const TraceEvent& e : s.events) ++seen[std::string(to_string(e.kind))];
      for (const Work& w : s.run) ++seen[std::string(to_string(w.kind))];
    }
    for (const StepView& s : timeline.steps)
      for (const auto& rows : s.rows)
        for (const BatchRow& row : rows) seen["lagging"] += row.lagging;
    const std::vector<StepDelivery> delivery = identity_deliveries(timeline);
    const LifecycleModel& model = sglang::lifecycle_model();
    const LifecycleOutcome fixed = model.run(t, timeline, delivery, "sglang-fixed", {});
    ASSERT_FALSE(fixed.crash_step.has_value()) << fixed.crash;
    ++judged;
    for (size_t r = 0; r < timeline.requests.size(); ++r) {
      const RequestView& v = timeline.requests[r];
      const RequestRoutes& got = fixed.requests[r];
      if (v.finish_step < 0) {
        EXPECT_EQ(got.status, RequestRoutes::Status::not_finished) << "request " << r;
        continue;
      }
      ++finished;
      if (!v.returns_output) {
        EXPECT_EQ(got.status, RequestRoutes::Status::none) << "request " << r;
        continue;
      }
      ASSERT_EQ(got.status, RequestRoutes::Status::returned) << "request " << r;
      ASSERT_EQ(got.rows.size(), v.expected.size()) << "request " << r;
      for (size_t i = 0; i < got.rows.size(); ++i)
        EXPECT_TRUE(same(timeline, got.rows[i], v.expected[i]))
            << "request " << r << " row " << i << ": " << describe(got.rows[i]) << ", expected "
            << describe(v.expected[i]);
    }
    // The trace judge agrees, with the per-step capture of sglang-fixed's policy on each step's
    // case (step_case) in place of the identity.
    const TraceJudgement judged_fixed = judge_trace(fixed_impl, t, timeline);
    EXPECT_EQ(judged_fixed.verdict, TraceVerdict::pass) << judged_fixed.detail;
    const std::vector<int> all = model.missing_patches("sglang");
    const LifecycleOutcome patched = model.run(t, timeline, delivery, "sglang", all);
    for (size_t r = 0; r < timeline.requests.size(); ++r) {
      EXPECT_EQ(patched.requests[r].status, fixed.requests[r].status);
      EXPECT_EQ(patched.requests[r].rows, fixed.requests[r].rows);
    }
    const LifecycleOutcome upstream = model.run(t, timeline, delivery, "sglang", {});
    for (size_t r = 0; r < timeline.requests.size(); ++r)
      upstream_wrong += upstream.requests[r].rows != fixed.requests[r].rows ||
                        upstream.requests[r].status != fixed.requests[r].status;
  }
  // The generator reaches real traces, every event among them, and upstream's defects.
  EXPECT_GT(judged, 900);
  EXPECT_GT(finished, 1500);
  EXPECT_GT(upstream_wrong, 100);
  for (const char* what :
       {"hit", "preempt", "abort", "weight_update", "offload", "restore", "pd_handoff", "verify", "lagging"})
    EXPECT_GT(seen[what], 20) << what;
  std::printf("judged %d traces, %d finished requests, %d upstream answers differ from the fixed model's\n", judged,
              finished, upstream_wrong);
  for (const auto& [what, count] : seen) std::printf("  %s: %d\n", what.c_str(), count);
}

}  // namespace
}  // namespace r3::test
