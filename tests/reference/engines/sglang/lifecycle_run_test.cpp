// SGLang's lifecycle walk (reference/engines/sglang/lifecycle_run.cpp) on the events every
// version handles right (docs/lifecycle-contract.md 2.1, the rows marked correct): each test
// gives the exact rows per request, and that they are the truth.
#include "reference/engines/sglang/lifecycle_run.hpp"

#include <gtest/gtest.h>

#include "tests/reference/engines/sglang/lifecycle_fixtures.hpp"

namespace r3::test {
namespace {

constexpr const char* kAllVersions[] = {"sglang", "sglang-miles", "sglang-fixed"};

TEST(SglangLifecycleRun, ChunkedPrefillKeepsEveryChunksRows) {
  Trace t = sglang_trace();
  t.config.chunk = 2;
  t.requests = {request(0, {1, 2, 3, 4, 5}, {6, 7})};
  t.steps = {step({extend(0, 0, 2)}), step({extend(0, 2, 4)}), step({extend(0, 4, 5)}), step({decode(0, 5)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(0, 0), route(0, 1), route(0, 2), route(0, 3), route(0, 4), route(0, 5));
    expect_truth(t, out);
  }
}

// The example (docs/lifecycle-contract.md T5, page 2): request 1 reuses request 0's first
// two pages, so its rows 0-3 are request 0's forward and rows 4-5 its own.
TEST(SglangLifecycleRun, PrefixHitReadsTheOwnersRows) {
  Trace t = sglang_trace(2);
  t.config.prefix_cache = true;
  t.requests = {request(0, {10, 11, 12, 13, 14}, {15, 16, 17}),
                request(1, {10, 11, 12, 13, 20, 21}, {30}, Finish::eos)};
  t.steps = {step({extend(0, 0, 5)}), step({extend(1, 4, 6)}, {hit(1, 4)}), step({decode(0, 5)}), step({decode(0, 6)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(0, 0), route(0, 1), route(0, 2), route(0, 3), route(0, 4), route(0, 5),
                   route(0, 6));
    EXPECT_RETURNS(out.requests[1], route(0, 0), route(0, 1), route(0, 2), route(0, 3), route(1, 4), route(1, 5));
    expect_truth(t, out);
  }
}

// max_new_tokens 0: the prefill samples one token, the finish length is 0, so P - 1 rows come back.
TEST(SglangLifecycleRun, PrefillOnlyReturnsPromptMinusOneRows) {
  Trace t = sglang_trace();
  t.requests = {request(0, {1, 2, 3, 4}, {9})};
  t.requests[0].max_new = 0;
  t.steps = {step({extend(0, 0, 4)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(0, 0), route(0, 1), route(0, 2));
  }
}

// A retract frees the KV without inserting it; the recompute (after a weight update) writes new
// slots, so every row is the recompute's, at the new version.
TEST(SglangLifecycleRun, PreemptionReturnsTheRecomputesRows) {
  Trace t = sglang_trace();
  t.requests = {request(0, {1, 2, 3}, {4, 5, 6})};
  t.steps = {step({extend(0, 0, 3)}), step({decode(0, 3)}),
             step({extend(0, 0, 5)}, {weights(1, false), on(TraceEvent::Kind::preempt, 0)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(0, 0, 1), route(0, 1, 1), route(0, 2, 1), route(0, 3, 1), route(0, 4, 1));
    expect_truth(t, out);
  }
}

TEST(SglangLifecycleRun, AbortWaitingAnswersNoneAndAbortRunningKeepsItsLastForward) {
  Trace t = sglang_trace();
  t.requests = {request(0, {1, 2}, {}, Finish::abort), request(1, {1, 2, 3}, {4, 5}, Finish::abort)};
  t.steps = {step({extend(1, 0, 3)}, {on(TraceEvent::Kind::abort, 0)}),
             step({decode(1, 3)}, {on(TraceEvent::Kind::abort, 1)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_EQ(out.requests[0].status, RequestRoutes::Status::none);
    EXPECT_TRUE(out.requests[0].rows.empty());
    EXPECT_RETURNS(out.requests[1], route(1, 0), route(1, 1), route(1, 2), route(1, 3));
    expect_truth(t, out);
  }
}

// Under overlap a request that finished on EOS decodes once more; its row goes to a slot freed
// at release and never reaches its answer.
TEST(SglangLifecycleRun, OverlapLagRowsStayOutOfTheAnswer) {
  Trace t = sglang_trace();
  t.config.overlap = true;
  t.requests = {request(0, {1, 2}, {3, 4}, Finish::eos), request(1, {7, 8}, {9, 10, 11})};
  t.requests[0].max_new = 4;
  t.steps = {step({extend(0, 0, 2), extend(1, 0, 2)}), step({decode(0, 2), decode(1, 2)}),
             step({decode(0, 3), decode(1, 3)}), step({decode(1, 4)})};
  const Timeline timeline = checked_timeline(t);
  ASSERT_EQ(timeline.steps[2].rows[0].size(), 2u);
  EXPECT_TRUE(timeline.steps[2].rows[0][0].lagging);
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(0, 0), route(0, 1), route(0, 2));
    EXPECT_RETURNS(out.requests[1], route(1, 0), route(1, 1), route(1, 2), route(1, 3));
    expect_truth(t, out);
  }
}

// EAGLE with topk 1: rejected drafts write their own slots, which are freed; the next verify
// writes the accepted positions anew.
TEST(SglangLifecycleRun, ChainVerifyKeepsOnlyAcceptedRows) {
  Trace t = sglang_trace();
  t.config.spec = SpecConfig{2, false};
  t.requests = {request(0, {1, 2, 3}, {4, 5, 6, 7, 8})};
  t.steps = {step({extend(0, 0, 3)}), step({verify(0, 3, 1)}), step({verify(0, 5, 2)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(0, 0), route(0, 1), route(0, 2), route(0, 3), route(0, 4), route(0, 5),
                   route(0, 6));
    expect_truth(t, out);
  }
}

// Decode graphs pad the batch to the bucket; the padded rows go to slot 0, on no request's path.
TEST(SglangLifecycleRun, CudaGraphPaddingLeaksIntoNoRequest) {
  Trace t = sglang_trace();
  t.config.cuda_graph_decode = {4};
  t.requests = {request(0, {1, 2, 3}, {4, 5, 6}), request(1, {8, 9}, {10, 11})};
  t.steps = {step({extend(0, 0, 3), extend(1, 0, 2)}), step({decode(0, 3), decode(1, 2)}), step({decode(0, 4)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(0, 0), route(0, 1), route(0, 2), route(0, 3), route(0, 4));
    EXPECT_RETURNS(out.requests[1], route(1, 0), route(1, 1), route(1, 2));
    expect_truth(t, out);
  }
}

// A flush resets the tree and the allocator: the next request recomputes at the new version
// (it arrives after the flush: a flush with requests pending fails, see lifecycle_test.cpp).
TEST(SglangLifecycleRun, WeightUpdateWithFlushRecomputesAtTheNewVersion) {
  Trace t = sglang_trace();
  t.config.prefix_cache = true;
  t.requests = {request(0, {1, 2, 3}, {4}), request(1, {1, 2, 3}, {4})};
  t.requests[1].arrival = 2;
  t.steps = {step({extend(0, 0, 3)}), step({}, {weights(1, true)}), step({extend(1, 0, 3)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(0, 0), route(0, 1), route(0, 2));
    EXPECT_RETURNS(out.requests[1], route(1, 0, 1), route(1, 1, 1), route(1, 2, 1));
    expect_truth(t, out);
  }
}

// Without a flush the tree keeps the old KV, and a hit on it uses the old version's routes: the
// truth (T2: the version of the forward that computed the KV).
TEST(SglangLifecycleRun, WeightUpdateWithoutFlushKeepsTheHitsOldVersion) {
  Trace t = sglang_trace();
  t.config.prefix_cache = true;
  t.requests = {request(0, {1, 2, 3}, {4}), request(1, {1, 2, 5, 6}, {7})};
  t.steps = {step({extend(0, 0, 3)}), step({extend(1, 2, 4)}, {weights(1, false), hit(1, 2)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[1], route(0, 0, 0), route(0, 1, 0), route(1, 2, 1), route(1, 3, 1));
    expect_truth(t, out);
  }
}

// DP attention: each rank its own slots (slot 1 on both ranks), each request its rank's rows.
TEST(SglangLifecycleRun, EachDpRankKeepsItsOwnSlots) {
  Trace t = sglang_trace();
  t.dp = 2;
  t.requests = {request(0, {1, 2, 3}, {4, 5}, Finish::length, 0), request(1, {6, 7}, {8, 9}, Finish::length, 1)};
  t.steps = {step({extend(0, 0, 3), extend(1, 0, 2)}), step({decode(0, 3), decode(1, 2)})};
  for (const char* v : kAllVersions) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(0, 0), route(0, 1), route(0, 2), route(0, 3));
    EXPECT_RETURNS(out.requests[1], route(1, 0), route(1, 1), route(1, 2));
    expect_truth(t, out);
  }
}

// A capture that raises crashes the engine at its step: requests finished before keep their
// answer, the rest never finish.
TEST(SglangLifecycleRun, ARaisingCaptureCrashesAtItsStep) {
  Trace t = sglang_trace();
  t.requests = {request(0, {1, 2}, {3}), request(1, {4, 5}, {6, 7})};
  t.steps = {step({extend(0, 0, 2), extend(1, 0, 2)}), step({decode(1, 2)})};
  const Timeline timeline = checked_timeline(t);
  std::vector<StepDelivery> delivery = identity_deliveries(timeline);
  delivery[1].raised = "IndexError: index 9 is out of bounds";
  const LifecycleOutcome out = sglang::lifecycle_model().run(t, timeline, delivery, "sglang", {});
  EXPECT_EQ(out.crash_step, 1);
  EXPECT_EQ(out.crash, "step 1: IndexError: index 9 is out of bounds");
  EXPECT_RETURNS(out.requests[0], route(0, 0), route(0, 1));
  EXPECT_EQ(out.requests[1].status, RequestRoutes::Status::not_finished);
}

// The delivery is what lands: a capture that misplaces rows shows in the request it corrupts.
TEST(SglangLifecycleRun, TheDeliveredRowsAreWhatLands) {
  Trace t = sglang_trace();
  t.requests = {request(0, {1, 2, 3}, {4})};
  t.steps = {step({extend(0, 0, 3)})};
  const Timeline timeline = checked_timeline(t);
  std::vector<StepDelivery> delivery = identity_deliveries(timeline);
  delivery[0].rows[0][1] = RouteRef{RouteRef::Kind::padding};
  const LifecycleOutcome out = sglang::lifecycle_model().run(t, timeline, delivery, "sglang-fixed", {});
  EXPECT_RETURNS(out.requests[0], route(0, 0), RouteRef{RouteRef::Kind::padding}, route(0, 2));
}

}  // namespace
}  // namespace r3::test
