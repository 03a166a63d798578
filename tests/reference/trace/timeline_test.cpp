#include "reference/trace/timeline.hpp"

#include <gtest/gtest.h>

#include "tests/reference/trace/example_trace.hpp"

namespace r3 {
namespace {

using test::decode;
using test::example_trace;
using test::extend;
using test::hit;
using test::on;
using test::verify;
using test::weight_update;

RouteRef route(int req, int64_t pos, int version = 0) { return {RouteRef::Kind::route, req, pos, version}; }

std::vector<RouteRef> own_rows(int req, int64_t lo, int64_t hi, int version = 0) {
  std::vector<RouteRef> out;
  for (int64_t p = lo; p < hi; ++p) out.push_back(route(req, p, version));
  return out;
}

std::string error_of(const Trace& t) {
  const Result<Timeline> timeline = build_timeline(t);
  return timeline ? "(no error)" : timeline.error().message;
}

TEST(Timeline, ExampleRowsFinishesAndTruth) {
  const Result<Timeline> timeline = build_timeline(example_trace());
  ASSERT_TRUE(timeline) << timeline.error().message;
  const Timeline& tl = *timeline;
  ASSERT_EQ(tl.steps.size(), 5u);
  EXPECT_EQ(tl.steps[0].rows[0], (std::vector<BatchRow>{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {2, 0}, {2, 1}}));
  EXPECT_EQ(tl.steps[0].finished, (std::vector<int>{2}));
  EXPECT_EQ(tl.steps[2].rows[0], (std::vector<BatchRow>{{1, 4}, {1, 5}}));
  EXPECT_EQ(tl.steps[2].finished, (std::vector<int>{1}));
  EXPECT_EQ(tl.steps[4].finished, (std::vector<int>{0}));

  EXPECT_EQ(tl.requests[0].expected, own_rows(0, 0, 7));  // 7 rows: positions 0 to 6
  std::vector<RouteRef> hit_rows = own_rows(0, 0, 4);     // the first two pages are request 0's forward
  for (const RouteRef& r : own_rows(1, 4, 6)) hit_rows.push_back(r);
  EXPECT_EQ(tl.requests[1].expected, hit_rows);
  EXPECT_EQ(tl.requests[2].expected, own_rows(2, 0, 1));  // prefill-only: P - 1 rows
  EXPECT_EQ(tl.requests[2].total, 2);
  EXPECT_TRUE(tl.same_route(route(1, 2), route(0, 2)));   // shared prefix [5, 6, 7]
  EXPECT_FALSE(tl.same_route(route(1, 4), route(0, 4)));  // 4 vs 9
  EXPECT_FALSE(tl.same_route(route(0, 2, 1), route(0, 2, 0)));
}

TEST(Timeline, PreemptionRecomputesAtTheNewVersion) {
  Trace t = example_trace();
  t.steps[3].events = {weight_update(1, false), on(TraceEvent::Kind::preempt, 0)};
  t.steps[3].run = {extend(0, 0, 6)};  // recompute the prompt and the first output, sample the second
  const Result<Timeline> tl = build_timeline(t);
  ASSERT_TRUE(tl) << tl.error().message;
  std::vector<RouteRef> want = own_rows(0, 0, 6, 1);
  want.push_back(route(0, 6, 1));
  EXPECT_EQ(tl->requests[0].expected, want);
  EXPECT_EQ(tl->steps[3].version, 1);
}

TEST(Timeline, HitWithoutFlushKeepsTheCachedVersion) {
  Trace t = example_trace();
  t.steps[2].events = {weight_update(1, false), hit(1, 4)};
  const Result<Timeline> tl = build_timeline(t);
  ASSERT_TRUE(tl) << tl.error().message;
  EXPECT_EQ(tl->requests[1].expected[0], route(0, 0, 0));
  EXPECT_EQ(tl->requests[1].expected[4], route(1, 4, 1));
  t.steps[2].events = {weight_update(1, true), hit(1, 4)};
  EXPECT_EQ(error_of(t), "steps[2].events[1].hit: request 1: position 0 is not cached (no earlier step computed that "
                         "prefix since the last flush)");
}

TEST(Timeline, VerifyKeepsAcceptedRowsOnly) {
  Trace t = example_trace();
  t.config.spec = SpecConfig{2, false};
  t.steps[3].run = {verify(0, 5, 1)};  // forwards 5, 6, 7; keeps 5, 6; samples two tokens
  t.steps.pop_back();
  const Result<Timeline> tl = build_timeline(t);
  ASSERT_TRUE(tl) << tl.error().message;
  EXPECT_EQ(tl->steps[3].rows[0], (std::vector<BatchRow>{{0, 5, true}, {0, 6, true}, {0, 7, false}}));
  EXPECT_EQ(tl->steps[3].finished, (std::vector<int>{0}));
  EXPECT_EQ(tl->requests[0].expected, own_rows(0, 0, 7));
}

TEST(Timeline, OverlapLetsAFinishedRequestDecodeOnce) {
  Trace t = example_trace();
  t.steps.push_back({{}, {decode(0, 7)}});
  EXPECT_EQ(error_of(t), "steps[5].run[0]: request 0 already finished at step 4");
  t.config.overlap = true;
  const Result<Timeline> tl = build_timeline(t);
  ASSERT_TRUE(tl) << tl.error().message;
  EXPECT_EQ(tl->steps[5].rows[0], (std::vector<BatchRow>{{0, 7, false, true}}));
  EXPECT_EQ(tl->requests[0].expected, own_rows(0, 0, 7));
}

TEST(Timeline, AbortOfWaitingAndRunningRequests) {
  Trace t = example_trace();
  t.requests[1].finish = Finish::abort;
  t.requests[1].outputs = {};
  t.steps[2] = {{on(TraceEvent::Kind::abort, 1)}, {}};
  const Result<Timeline> waiting = build_timeline(t);
  ASSERT_TRUE(waiting) << waiting.error().message;
  EXPECT_FALSE(waiting->requests[1].returns_output);
  EXPECT_EQ(waiting->steps[2].aborted_before, (std::vector<int>{1}));

  Trace running = example_trace();
  running.requests[0].finish = Finish::abort;
  running.requests[0].outputs = {1, 2};
  running.steps[3].events = {on(TraceEvent::Kind::abort, 0)};
  running.steps.pop_back();  // the abort lands at the result processing of step 3: it keeps that sample
  const Result<Timeline> tl = build_timeline(running);
  ASSERT_TRUE(tl) << tl.error().message;
  EXPECT_EQ(tl->steps[3].finished, (std::vector<int>{0}));
  EXPECT_EQ(tl->requests[0].expected, own_rows(0, 0, 6));
}

TEST(Timeline, OffloadAndPdHandoffKeepTheirKv) {
  Trace t = example_trace();
  t.steps[3].events = {on(TraceEvent::Kind::offload, 0)};
  t.steps[3].run = {};
  t.steps[4].events = {on(TraceEvent::Kind::restore, 0)};
  t.steps[4].run = {decode(0, 5)};
  t.steps.push_back({{}, {decode(0, 6)}});
  const Result<Timeline> tl = build_timeline(t);
  ASSERT_TRUE(tl) << tl.error().message;
  EXPECT_EQ(tl->requests[0].expected, own_rows(0, 0, 7));

  Trace pd = example_trace();
  pd.steps = {{{on(TraceEvent::Kind::pd_handoff, 0)}, {decode(0, 5)}}, {{}, {decode(0, 6)}}};
  pd.requests.resize(1);
  const Result<Timeline> handed = build_timeline(pd);
  ASSERT_TRUE(handed) << handed.error().message;
  EXPECT_EQ(handed->requests[0].expected, own_rows(0, 0, 7));
}

TEST(Timeline, ErrorsNameTheStepAndTheRule) {
  Trace t = example_trace();
  t.steps[1].run = {extend(0, 3, 5)};
  EXPECT_EQ(error_of(t), "steps[1].run[0]: request 0 extends from 3 but holds KV for positions [0, 4)");
  t = example_trace();
  t.steps[3].run = {decode(0, 4)};
  EXPECT_EQ(error_of(t), "steps[3].run[0]: request 0 decodes position 4, but its next input is position 5");
  t = example_trace();
  t.steps[0].run.push_back(extend(0, 4, 5));
  EXPECT_EQ(error_of(t), "steps[0].run[2]: request 0 runs twice in one step");
  t = example_trace();
  t.config.token_budget = 5;
  EXPECT_EQ(error_of(t), "steps[0]: DP rank 0 forwards 6 rows, over config.token_budget = 5");
  t = example_trace();
  t.requests[0].outputs = {1, 2};
  t.requests[0].max_new = 3;
  EXPECT_EQ(error_of(t), "requests[0].outputs: a length finish keeps max_new = 3 outputs, not 2");
  t = example_trace();
  t.requests[2].start_len = 3;
  EXPECT_EQ(error_of(t), "requests[2].start_len: 3 is outside [0, prompt length 2]");
  t = example_trace();
  t.steps[2].run = {verify(1, 4, 0)};
  EXPECT_EQ(error_of(t), "steps[2].run[0]: request 1 verifies position 4 before finishing its prompt (it holds KV "
                         "for [0, 4) of 6)");
  t = example_trace();
  t.requests[1].finish = Finish::abort;
  t.steps[2] = {{on(TraceEvent::Kind::abort, 1)}, {}};
  EXPECT_EQ(error_of(t), "steps[2].events[0].abort: request 1 ends before any forward, so it samples nothing, but its "
                         "outputs list 1");
}

}  // namespace
}  // namespace r3
