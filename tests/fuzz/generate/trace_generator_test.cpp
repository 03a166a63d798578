#include "fuzz/generate/trace_generator.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fuzz/generate/engine_trace_draw.hpp"
#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"

namespace r3 {
namespace {

Profile profile_named(const std::string& name) {
  Result<Profile> p = parse_profile(name);
  EXPECT_TRUE(p.ok()) << name;
  return p.ok() ? *p : Profile::any();
}

const std::vector<std::string>& profile_names_under_test() {
  static const std::vector<std::string> names = {"vllm", "vllm-legacy", "sglang", "sglang-miles", "any"};
  return names;
}

// Why a drawn trace is not one `profile` runs, or "" when it is.
std::string outside(const Trace& t, Profile profile) {
  Result<Timeline> timeline = validate_trace(t);
  if (!timeline.ok()) return "invalid: " + timeline.error().message;
  const LifecycleModel* model = lifecycle_of(t.engine);
  if (model == nullptr) return "no lifecycle model";
  if (Status inside = model->check_profile(t, *timeline, profile); !inside.ok())
    return "outside the profile: " + inside.error().message;
  if (!profile.is_any() && !(t.engine == profile.engine())) return "another engine than the profile's";
  return "";
}

RC_GTEST_PROP(TraceGenerator, EveryDrawPassesValidationAndLiesInsideItsProfile, ()) {
  const std::string name = *rc::gen::elementOf(profile_names_under_test());
  const Profile profile = profile_named(name);
  RC_TAG(name);
  Rng rng(*rc::gen::arbitrary<uint64_t>());
  Result<Trace> t = draw_trace(rng, profile);
  const std::string error = t.ok() ? std::string() : t.error().message;
  RC_ASSERT(error == std::string());
  RC_ASSERT(outside(*t, profile) == std::string());
}

RC_GTEST_PROP(TraceGenerator, TheSameSeedDrawsTheSameTrace, ()) {
  const Profile profile = profile_named(*rc::gen::elementOf(profile_names_under_test()));
  const auto seed = *rc::gen::arbitrary<uint64_t>();
  Rng a(seed);
  Rng b(seed);
  Result<Trace> first = draw_trace(a, profile);
  Result<Trace> second = draw_trace(b, profile);
  RC_ASSERT(first.ok());
  RC_ASSERT(second.ok());
  RC_ASSERT(*first == *second);
  RC_ASSERT(a.next() == b.next());  // the draws consumed the same random values
}

TEST(TraceGenerator, SmallLimitsBoundTheDraw) {
  TraceDrawLimits limits;
  limits.max_requests = 2;
  limits.max_steps = 5;
  limits.max_prompt = 3;
  limits.max_outputs = 2;
  limits.max_dp = 1;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(seed);
    Result<Trace> t = draw_trace(rng, Profile::any(), limits);
    ASSERT_TRUE(t.ok()) << "seed " << seed << ": " << t.error().message;
    EXPECT_LE(t->steps.size(), 5u);
    EXPECT_EQ(t->dp, 1);
    EXPECT_LE(t->requests.size(), 4u);  // two drawn, and at most two resumes of aborted ones
    for (const TraceRequest& r : t->requests) {
      if (!r.resume_of) {
        EXPECT_LE(r.prompt.size(), 3u);
      }
    }
  }
}

TEST(TraceGenerator, LimitsItCannotHonourAreAnError) {
  Rng rng(1);
  TraceDrawLimits limits;
  limits.max_requests = 0;
  Result<Trace> t = draw_trace(rng, Profile::any(), limits);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "TraceDrawLimits.max_requests: 0 is below 1");
  limits = TraceDrawLimits{};
  limits.max_top_k = 4;
  limits.max_experts = 3;
  t = draw_trace(rng, Profile::any(), limits);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            "TraceDrawLimits.max_experts: 3 is below max_top_k = 4 (a model routes to top_k distinct experts)");
}

// The lifecycle features a drawn trace shows (docs/lifecycle-contract.md), found by walking it.
struct Features {
  int chunked_extend = 0;   // an extend that ends before the last known token (samples nothing)
  int hit = 0;
  int preempt = 0;
  int abort_running = 0;    // an abort of a request that had already forwarded
  int abort_waiting = 0;
  int lag_row = 0;          // an overlap row of a request that finished the step before
  int verify_rejection = 0; // a verify that kept fewer than all its drafts
  int multi_dp = 0;         // a step with rows on two or more DP ranks
  int weight_update = 0;
  int resume = 0;
  int pd_handoff = 0;
  int offload = 0;
  int restore = 0;
  int mixed_batch = 0;      // a DP rank that extends and decodes in one step
  int tree_verify = 0;      // a verify of a draft tree
};

void count(const Trace& t, Features& f) {
  Result<Timeline> timeline = validate_trace(t);
  ASSERT_TRUE(timeline.ok()) << timeline.error().message;
  std::vector<int64_t> sampled(t.requests.size(), 0);
  std::vector<bool> forwarded(t.requests.size(), false);
  for (size_t n = 0; n < t.steps.size(); ++n) {
    for (const TraceEvent& e : t.steps[n].events) {
      switch (e.kind) {
        case TraceEvent::Kind::hit: ++f.hit; break;
        case TraceEvent::Kind::preempt: ++f.preempt; break;
        case TraceEvent::Kind::abort: ++(forwarded[static_cast<size_t>(e.req)] ? f.abort_running : f.abort_waiting); break;
        case TraceEvent::Kind::weight_update: ++f.weight_update; break;
        case TraceEvent::Kind::pd_handoff:
          ++f.pd_handoff;
          sampled[static_cast<size_t>(e.req)] = 1;
          break;
        case TraceEvent::Kind::offload: ++f.offload; break;
        case TraceEvent::Kind::restore: ++f.restore; break;
      }
    }
    std::vector<int> kinds(static_cast<size_t>(t.dp), 0);  // bit 1: an extend, bit 2: a decode or verify
    for (const Work& w : t.steps[n].run) {
      const auto r = static_cast<size_t>(w.req);
      kinds[static_cast<size_t>(t.requests[r].dp)] |= w.kind == Work::Kind::extend ? 1 : 2;
      if (w.kind == Work::Kind::verify && t.config.spec && t.config.spec->tree) ++f.tree_verify;
      const int64_t known = static_cast<int64_t>(t.requests[r].prompt.size()) + sampled[r];
      const bool lagging = timeline->requests[r].finish_step >= 0 && timeline->requests[r].finish_step < static_cast<int>(n);
      forwarded[r] = true;
      if (lagging) continue;
      if (w.kind == Work::Kind::extend) {
        if (w.hi < known) ++f.chunked_extend;
        if (w.hi == known) ++sampled[r];
      } else {
        sampled[r] += w.kind == Work::Kind::verify ? w.accepted + 1 : 1;
        if (w.kind == Work::Kind::verify && t.config.spec && w.accepted < t.config.spec->width) ++f.verify_rejection;
      }
    }
    int ranks = 0;
    for (const auto& rows : timeline->steps[n].rows) {
      ranks += rows.empty() ? 0 : 1;
      for (const BatchRow& row : rows) f.lag_row += row.lagging ? 1 : 0;
    }
    f.multi_dp += ranks >= 2 ? 1 : 0;
    for (const int k : kinds) f.mixed_batch += k == 3 ? 1 : 0;
  }
  for (const TraceRequest& r : t.requests) f.resume += r.resume_of ? 1 : 0;
}

Features features_of(Profile profile, int draws) {
  Features f;
  for (int seed = 0; seed < draws; ++seed) {
    Rng rng(static_cast<uint64_t>(seed));
    Result<Trace> t = draw_trace(rng, profile);
    EXPECT_TRUE(t.ok()) << "seed " << seed << ": " << t.error().message;
    if (t.ok()) count(*t, f);
  }
  return f;
}

// Every lifecycle feature the engine's scheduler produces shows up within a few hundred draws of
// each engine's profiles, and none it never produces.
TEST(TraceGenerator, EachEngineProfileDrawsEveryLifecycleFeatureItSupports) {
  for (const std::string name : {"vllm", "sglang", "sglang-miles"}) {
    SCOPED_TRACE(name);
    const bool sglang = name != "vllm";
    const Features f = features_of(profile_named(name), 400);
    EXPECT_GT(f.chunked_extend, 0);
    EXPECT_GT(f.hit, 0);
    EXPECT_GT(f.preempt, 0);
    EXPECT_GT(f.abort_running, 0);
    EXPECT_GT(f.abort_waiting, 0);
    EXPECT_GT(f.lag_row, 0);
    EXPECT_GT(f.verify_rejection, 0);
    EXPECT_GT(f.multi_dp, 0);
    EXPECT_GT(f.weight_update, 0);
    EXPECT_GT(f.resume, 0);
    // vLLM's unified batch mixes prefill chunks and decodes in every step it can; SGLang only
    // under --enable-mixed-chunk.
    EXPECT_GT(f.mixed_batch, 0);
    if (sglang) {  // a P/D decode instance, its offload retract, and EAGLE's draft trees
      EXPECT_GT(f.pd_handoff, 0);
      EXPECT_GT(f.offload, 0);
      EXPECT_GT(f.restore, 0);
      EXPECT_GT(f.tree_verify, 0);
    } else {  // vLLM main refuses KV connectors at start-up; its drafts are chains
      EXPECT_EQ(f.pd_handoff, 0);
      EXPECT_EQ(f.offload, 0);
      EXPECT_EQ(f.restore, 0);
      EXPECT_EQ(f.tree_verify, 0);
    }
  }
}

TEST(TraceGenerator, AnyDrawsEveryEngineThatHasATracePart) {
  std::set<size_t> engines;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    Rng rng(seed);
    Result<Trace> t = draw_trace(rng, Profile::any());
    ASSERT_TRUE(t.ok()) << t.error().message;
    engines.insert(t->engine.index());
  }
  size_t drawable = 0;
  for (const Engine e : all_engines()) drawable += lifecycle_of(e) != nullptr && engine_trace_draw(e) != nullptr;
  EXPECT_GE(drawable, 2u);  // vllm and sglang at least
  EXPECT_EQ(engines.size(), drawable);
}

// The copies record: drawn within the engine's window (EveryDrawPassesValidationAndLiesInsideItsProfile
// checks that through check_profile), only where a copy can land late (overlap scheduling), and
// never as the older SGLang knob.
TEST(TraceGenerator, EachEngineProfileDrawsCompletionOrdersWithinItsWindow) {
  for (const std::string name : {"vllm", "sglang"}) {
    SCOPED_TRACE(name);
    int late = 0, every = 0;
    for (uint64_t seed = 0; seed < 300; ++seed) {
      Rng rng(seed);
      const Result<Trace> t = draw_trace(rng, profile_named(name));
      ASSERT_TRUE(t.ok()) << t.error().message;
      EXPECT_EQ(t->knobs.count("config.overlap_copy_race"), 0u) << seed;
      if (t->copies.empty()) continue;
      EXPECT_TRUE(t->config.overlap) << seed;
      ++late;
      const Result<Timeline> timeline = validate_trace(*t);
      ASSERT_TRUE(timeline.ok());
      const CopyWindow w = engine_trace_draw(t->engine)->copy_window(*t, *timeline);
      size_t can = 0;
      for (size_t s = 0; s < w.latest.size(); ++s) can += w.latest[s] > static_cast<int>(s) + 1;
      every += t->copies.size() == can;
    }
    EXPECT_GT(late, 30);
    EXPECT_GT(every, 10);  // some traces have every copy as late as the window allows
  }
}

TEST(TraceGenerator, DrawCopiesWithinKeepsToTheWindowInStepOrder) {
  Trace t;
  t.steps.resize(6);
  Rng rng(7);
  draw_copies_within(rng, in_order_window(t, "inline"), t);
  EXPECT_TRUE(t.copies.empty());
  CopyWindow w = lagging_window(t, 2, "lag");
  w.latest[3] = 4;  // step 3 in order
  int drawn = 0;
  for (int i = 0; i < 50; ++i) {
    draw_copies_within(rng, w, t);
    drawn += !t.copies.empty();
    for (size_t k = 0; k < t.copies.size(); ++k) {
      const CopyCompletion& c = t.copies[k];
      EXPECT_NE(c.step, 3);
      EXPECT_GE(c.done_before_step, c.step + 2);
      EXPECT_LE(c.done_before_step, w.latest[static_cast<size_t>(c.step)]);
      if (k > 0) {
        EXPECT_GT(c.step, t.copies[k - 1].step);
      }
    }
    EXPECT_TRUE(check_copies(t).ok());
  }
  EXPECT_GT(drawn, 10);
  EXPECT_LT(drawn, 50);
}

}  // namespace
}  // namespace r3
