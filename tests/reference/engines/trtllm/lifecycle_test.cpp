// TensorRT-LLM's lifecycle model (reference/engines/trtllm/lifecycle*): the rows each version
// returns per request, for each rule of docs/lifecycle-contract.md 2.5, and the fixed model's.
#include <gtest/gtest.h>

#include "reference/engines/trtllm/lifecycle.hpp"
#include "tests/reference/engines/trtllm/lifecycle_fixtures.hpp"

namespace r3 {
namespace {

using namespace test::trtllm_trace;

TEST(TrtllmLifecycle, VersionsAndPatches) {
  ASSERT_EQ(model().versions().size(), 3u);
  EXPECT_EQ(model().versions()[0].name, "trtllm");
  EXPECT_EQ(model().versions()[1].name, "trtllm-06a976ce");
  EXPECT_EQ(model().versions()[2].name, "trtllm-fixed");
  EXPECT_FALSE(model().versions()[2].released);
  std::vector<std::string> names;
  for (const LifecyclePatch& p : model().patches()) names.emplace_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"store-follows-kv", "decode-position", "inclusive-range", "range-to-finish",
                                             "shared-cache-epoch", "cache-every-row", "commit-before-reuse"}));
  EXPECT_EQ(model().missing_patches(kE), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(model().missing_patches(kL), (std::vector<int>{0, 1, 3, 4, 5}));
  EXPECT_TRUE(model().missing_patches(kFixed).empty());
}

// R4: a hit's positions come from the SharedRouteCache, filled by the owner's prompt rows; R6:
// E drops the highest stored position, L keeps it.
Trace prefix_hit() {
  return trtllm_trace({request(0, {1, 2, 3}, {4, 5}), request(1, {1, 2, 6}, {7})},
                      {{{}, {extend(0, 0, 3)}}, {{hit(1, 2)}, {extend(1, 2, 3), decode(0, 3)}}});
}

TEST(TrtllmLifecycle, PrefixHitReadsTheOwnersRowsBack) {
  const Trace t = prefix_hit();
  ASSERT_EQ(profile_error(t), "runs");
  const auto hit_rows = std::vector<RouteRef>{route(0, 0), route(0, 1), route(1, 2)};
  EXPECT_EQ(expected_of(t, 1), hit_rows);
  for (std::string_view v : {kL, kFixed}) {
    const LifecycleOutcome out = run(t, v);
    EXPECT_EQ(rows_of(out, 0), own(0, 0, 4)) << v;
    EXPECT_EQ(rows_of(out, 1), hit_rows) << v;
  }
}

TEST(TrtllmLifecycle, EDropsTheHighestStoredPositionAndLDoesNot) {
  const LifecycleOutcome e = run(prefix_hit(), kE);
  EXPECT_EQ(rows_of(e, 0), own(0, 0, 3));
  EXPECT_EQ(rows_of(e, 1), (std::vector<RouteRef>{route(0, 0), route(0, 1)}));
  EXPECT_EQ(rows_of(run(prefix_hit(), kE, {trtllm::kPatchInclusiveRange}), 0), own(0, 0, 4));
}

// N3 (a): under overlap a request that stops on eos runs one more step; its row for S - 1 is
// committed before attach_routes, and L returns it.
TEST(TrtllmLifecycle, OverlapExtraStepMakesLReturnOneRowTooMany) {
  Trace t = trtllm_trace({request(0, {1, 2}, {3, 9}, Finish::eos)},
                         {{{}, {extend(0, 0, 2)}}, {{}, {decode(0, 2)}}, {{}, {decode(0, 3)}}});
  t.config.overlap = true;
  ASSERT_EQ(profile_error(t), "runs");
  EXPECT_EQ(rows_of(run(t, kL), 0), own(0, 0, 4));
  EXPECT_EQ(rows_of(run(t, kL, {trtllm::kPatchRangeToFinish}), 0), own(0, 0, 3));
  EXPECT_EQ(rows_of(run(t, kE), 0), own(0, 0, 3));
  EXPECT_EQ(rows_of(run(t, kFixed), 0), own(0, 0, 3));
}

// R6: nothing when the highest stored position is 0.
TEST(TrtllmLifecycle, ARequestWhoseOnlyStoredPositionIsZeroGetsNoRoutes) {
  const Trace t = trtllm_trace({request(0, {1}, {2})}, {{{}, {extend(0, 0, 1)}}});
  for (std::string_view v : {kE, kL}) {
    const LifecycleOutcome out = run(t, v);
    EXPECT_FALSE(out.crash_step.has_value());
    EXPECT_EQ(out.requests[0].status, RequestRoutes::Status::none) << v;
  }
  EXPECT_EQ(rows_of(run(t, kFixed), 0), own(0, 0, 1));
}

// R3: the store is write-once, so a recompute at a new weight version keeps the old rows.
TEST(TrtllmLifecycle, WriteOnceStoreKeepsTheOldRowsAfterAReprefill) {
  const Trace t = trtllm_trace({request(0, {1, 2, 3}, {4, 5, 6})},
                               {{{}, {extend(0, 0, 3)}},
                                {{}, {decode(0, 3)}},
                                {{weight_update(1, false), on(TraceEvent::Kind::preempt, 0)}, {extend(0, 0, 5)}}});
  ASSERT_EQ(profile_error(t), "runs");
  EXPECT_EQ(expected_of(t, 0), own(0, 0, 5, 1));
  EXPECT_EQ(rows_of(run(t, kL), 0), cat(own(0, 0, 4, 0), {route(0, 4, 1)}));
  EXPECT_EQ(rows_of(run(t, kE), 0), own(0, 0, 4, 0));
  EXPECT_EQ(rows_of(run(t, kL, {trtllm::kPatchStoreFollowsKv}), 0), own(0, 0, 5, 1));
  EXPECT_EQ(rows_of(run(t, kFixed), 0), own(0, 0, 5, 1));
}

// R2, N2 (a): the private decode counter is not reset by a re-prefill through the last token, so
// every later decode row lands one position early, and write-once drops the first of them.
TEST(TrtllmLifecycle, DecodeCounterShiftsRowsAfterAReprefill) {
  const Trace t = trtllm_trace({request(0, {1, 2}, {3, 4, 5, 6, 7})},
                               {{{}, {extend(0, 0, 2)}},
                                {{}, {decode(0, 2)}},
                                {{on(TraceEvent::Kind::preempt, 0)}, {extend(0, 0, 4)}},
                                {{}, {decode(0, 4)}},
                                {{}, {decode(0, 5)}}});
  ASSERT_EQ(profile_error(t), "runs");
  EXPECT_EQ(rows_of(run(t, kL), 0), cat(own(0, 0, 4), {route(0, 5)}));
  EXPECT_EQ(rows_of(run(t, kE), 0), own(0, 0, 4));
  EXPECT_EQ(rows_of(run(t, kL, {trtllm::kPatchDecodePosition}), 0), own(0, 0, 6));
  EXPECT_EQ(rows_of(run(t, kFixed), 0), own(0, 0, 6));
}

// A running request aborted at its next forward keeps that step's sample (T5); a waiting one
// gets nothing.
TEST(TrtllmLifecycle, AbortedRequests) {
  Trace t = trtllm_trace({request(0, {1, 2}, {3, 4}, Finish::abort), request(1, {5, 6}, {}, Finish::abort)},
                         {{{on(TraceEvent::Kind::abort, 1)}, {extend(0, 0, 2)}},
                          {{on(TraceEvent::Kind::abort, 0)}, {decode(0, 2)}}});
  ASSERT_EQ(profile_error(t), "runs");
  EXPECT_EQ(expected_of(t, 0), own(0, 0, 3));
  EXPECT_EQ(rows_of(run(t, kL), 0), own(0, 0, 3));
  EXPECT_EQ(rows_of(run(t, kE), 0), own(0, 0, 2));
  EXPECT_EQ(rows_of(run(t, kFixed), 0), own(0, 0, 3));
  for (std::string_view v : {kE, kL, kFixed}) EXPECT_EQ(run(t, v).requests[1].status, RequestRoutes::Status::none) << v;
}

// R4, R6, R7: only prompt rows enter the cache, so a hit on another request's output positions
// leaves a gap; E swallows assemble's error (no routes), L raises it.
Trace resumed_conversation() {
  TraceRequest resumed = request(1, {1, 2, 3, 4, 5}, {6});
  resumed.resume_of = 0;
  return trtllm_trace({request(0, {1, 2}, {3, 4, 5}, Finish::abort), resumed},
                      {{{}, {extend(0, 0, 2)}}, {{}, {decode(0, 2)}}, {{hit(1, 3)}, {extend(1, 3, 5)}}});
}

TEST(TrtllmLifecycle, HitOnAnotherRequestsOutputsLeavesAGap) {
  const Trace t = resumed_conversation();
  ASSERT_EQ(profile_error(t), "runs");
  const LifecycleOutcome l = run(t, kL);
  ASSERT_TRUE(l.crash_step.has_value());
  EXPECT_EQ(l.crash,
            "step 2: attach_routes raised for request 1: no stored row at position 2, below its highest stored "
            "position 4 (RouteCapture.assemble fails closed on a gap)");
  const LifecycleOutcome e = run(t, kE);
  EXPECT_FALSE(e.crash_step.has_value());
  EXPECT_EQ(e.requests[1].status, RequestRoutes::Status::none);
  EXPECT_EQ(rows_of(run(t, kFixed), 1), (std::vector<RouteRef>{route(0, 0), route(0, 1), route(0, 2), route(1, 3), route(1, 4)}));
  EXPECT_EQ(rows_of(run(t, kL, {trtllm::kPatchCacheEveryRow}), 1), expected_of(t, 1));
}

// R4: clear_shared resets the populate cursors but keeps the stores, so a request still holding
// rows from before the reset pushes them into the new cache first.
TEST(TrtllmLifecycle, ClearSharedRepopulatesRowsFromBeforeTheReset) {
  const Trace t = trtllm_trace({request(0, {1, 2, 3}, {7, 8}), request(1, {1, 2, 4}, {6}), request(2, {1, 2, 5}, {9})},
                               {{{}, {extend(0, 0, 3)}},
                                {{weight_update(1, true)}, {extend(1, 0, 3), decode(0, 3)}},
                                {{hit(2, 2)}, {extend(2, 2, 3)}}});
  ASSERT_EQ(profile_error(t), "runs");
  const std::vector<RouteRef> truth = {route(1, 0, 1), route(1, 1, 1), route(2, 2, 1)};
  EXPECT_EQ(expected_of(t, 2), truth);
  EXPECT_EQ(rows_of(run(t, kL), 2), (std::vector<RouteRef>{route(0, 0, 0), route(0, 1, 0), route(2, 2, 1)}));
  EXPECT_EQ(rows_of(run(t, kL, {trtllm::kPatchSharedCacheEpoch}), 2), truth);
  EXPECT_EQ(rows_of(run(t, kFixed), 2), truth);
}

// R9: E reuses a ring slot whose entry is still pending; the next drain commits the new rows
// under the old layout. Step 2's copy is seen landed only at step 5 (with steps 3 and 4: one
// stream), when step 5's stage reuses its slot.
Trace ring_wrap() {
  Trace t = trtllm_trace({request(0, {1}, {2, 3, 4, 5, 6, 7})},
                         {{{}, {extend(0, 0, 1)}},
                          {{}, {decode(0, 1)}},
                          {{}, {decode(0, 2)}},
                          {{}, {decode(0, 3)}},
                          {{}, {decode(0, 4)}},
                          {{}, {decode(0, 5)}}});
  t.copies = {{2, 6}, {3, 6}, {4, 6}};
  return t;
}

TEST(TrtllmLifecycle, ERingWrapCommitsNewRowsUnderTheOldLayout) {
  const Trace t = ring_wrap();
  ASSERT_EQ(profile_error(t), "runs");
  EXPECT_EQ(rows_of(run(t, kE), 0), (std::vector<RouteRef>{route(0, 0), route(0, 1), route(0, 5), route(0, 3), route(0, 4)}));
  EXPECT_EQ(rows_of(run(t, kE, {trtllm::kPatchCommitBeforeReuse, trtllm::kPatchInclusiveRange}), 0), own(0, 0, 6));
  EXPECT_EQ(rows_of(run(t, kL), 0), own(0, 0, 6));
  EXPECT_EQ(rows_of(run(t, kFixed), 0), own(0, 0, 6));
  // In order, E's only difference is its range.
  Trace in_order = t;
  in_order.copies.clear();
  EXPECT_EQ(rows_of(run(in_order, kE), 0), own(0, 0, 5));
}

TEST(TrtllmLifecycle, ACopyRecordPastTheRingIsOutsideTheProfile) {
  Trace t = ring_wrap();
  t.copies = {{1, 6}};
  EXPECT_EQ(profile_error(t),
            "copies[0].done_before_step: 6 is past what step 1's copy allows (at most 5): TensorRT-LLM's RouteCopier "
            "queries a copy's event without waiting, and its ring of 3 pinned slots synchronizes step S's copy when "
            "step S + 3's stage reuses the slot (route_capture.py: RouteCopier.stage, drain @ 06a976ce, aa94b01)");
}

TEST(TrtllmLifecycle, CudaGraphPaddingRowsAreNeverStored) {
  Trace t = trtllm_trace({request(0, {1, 2}, {3, 4, 5}), request(1, {6}, {7, 8})},
                         {{{}, {extend(0, 0, 2), extend(1, 0, 1)}}, {{}, {decode(0, 2), decode(1, 1)}}, {{}, {decode(0, 3)}}});
  t.config.cuda_graph_decode = {4};
  ASSERT_EQ(profile_error(t), "runs");
  for (std::string_view v : {kL, kFixed}) {
    const LifecycleOutcome out = run(t, v);
    EXPECT_EQ(rows_of(out, 0), own(0, 0, 4)) << v;
    EXPECT_EQ(rows_of(out, 1), own(1, 0, 2)) << v;
  }
}

}  // namespace
}  // namespace r3
