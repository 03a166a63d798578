// vLLM's lifecycle versions run over traces built as values, each step's capture delivered as
// itself: the exact rows each request returns under vllm-50874 (main), vllm-pre-50874 (the
// slot-keyed generation) and r3-fixed, each defect with the patch that alone repairs it.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/reference/engines/vllm/lifecycle_fixtures.hpp"

namespace r3 {
namespace {

using namespace test::vllm_trace;
using Kind = TraceEvent::Kind;

constexpr std::string_view kMain = "vllm-50874";
constexpr std::string_view kSlots = "vllm-pre-50874";
constexpr std::string_view kFixed = "r3-fixed";

// Every version returns `rows` for request `req`, and they are the truth.
void all_versions_return(const Trace& t, int req, const std::vector<RouteRef>& rows) {
  EXPECT_EQ(expected_of(t, req), rows);
  for (std::string_view version : {kMain, kSlots, kFixed}) EXPECT_EQ(rows_of(run(t, version), req), rows) << version;
}

TEST(VllmLifecycleRuns, ChunkedPrefillReturnsEveryChunkOnce) {
  // Non-final chunks capture and publish but emit nothing; the final chunk emits from 0, its
  // earlier blocks read back from the store (vllm-50874) or from the slots (vllm-pre-50874).
  const Trace t = vllm_trace({request(0, {1, 2, 3, 4, 5}, {6, 7})},
                             {{{}, {extend(0, 0, 2)}}, {{}, {extend(0, 2, 4)}}, {{}, {extend(0, 4, 5)}}, {{}, {decode(0, 5)}}});
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  EXPECT_EQ(profile_error(t, legacy_profile()), "runs");
  all_versions_return(t, 0, own(0, 0, 6));
}

TEST(VllmLifecycleRuns, PromptStartCutsTheFrontOnMainAndTheFixedModel) {
  Trace t = vllm_trace({request(0, {1, 2, 3, 4, 5}, {6, 7})},
                       {{{}, {extend(0, 0, 2)}}, {{}, {extend(0, 2, 5)}}, {{}, {decode(0, 5)}}});
  t.requests[0].start_len = 3;
  EXPECT_EQ(expected_of(t, 0), own(0, 3, 6));
  EXPECT_EQ(rows_of(run(t, kMain), 0), own(0, 3, 6));
  EXPECT_EQ(rows_of(run(t, kFixed), 0), own(0, 3, 6));
  // The slot-keyed generation has no prompt start: it reads [0, num_tokens - 1), and its
  // profile refuses the request.
  EXPECT_EQ(rows_of(run(t, kSlots), 0), own(0, 0, 6));
  EXPECT_EQ(profile_error(t, legacy_profile()),
            "requests[0].start_len: 3, but vLLM releases before the AuxOutput connector have no "
            "routed_experts_prompt_start (added by #51906) under profile vllm-legacy");
}

TEST(VllmLifecycleRuns, PrefixHitReturnsTheProducersRows) {
  // Request 1 hits request 0's two cached blocks: rows 0-3 are request 0's forward.
  const Trace t = vllm_trace({request(0, {5, 6, 7, 8, 9}, {1}), request(1, {5, 6, 7, 8, 4, 4}, {2}, Finish::eos)},
                             {{{}, {extend(0, 0, 5)}}, {{hit(1, 4)}, {extend(1, 4, 6)}}});
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  all_versions_return(t, 0, own(0, 0, 5));
  all_versions_return(t, 1, cat(own(0, 0, 4), own(1, 4, 6)));
}

TEST(VllmLifecycleRuns, PreemptionRecomputesAndKeepsItsRows) {
  // N4 (a): main tears the state down at the preemption and, resumed, emits from
  // num_tokens - 1; with no weight update in between its earlier rows are the truth.
  const Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5, 6})}, {{{}, {extend(0, 0, 3)}},
                                                                  {{}, {decode(0, 3)}},
                                                                  {{on(Kind::preempt, 0)}, {}},
                                                                  {{hit(0, 4)}, {extend(0, 4, 5)}}});
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  all_versions_return(t, 0, own(0, 0, 5));
}

// Preempted after its prefill, resumed after a weight update without flush: its cached block 0
// is a hit (version 0), positions 2 and 3 are recomputed at version 1.
Trace preempted_across_weight_update() {
  return vllm_trace({request(0, {1, 2, 3}, {4, 5, 6})},
                    {{{}, {extend(0, 0, 3)}},
                     {{on(Kind::preempt, 0), weight_update(1, false)}, {}},
                     {{hit(0, 2)}, {extend(0, 2, 4)}},
                     {{}, {decode(0, 4)}}});
}

TEST(VllmLifecycleRuns, MainKeepsRowsStreamedBeforeAPreemptionAcrossAWeightUpdate) {
  const Trace t = preempted_across_weight_update();
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  const std::vector<RouteRef> truth = cat(own(0, 0, 2, 0), own(0, 2, 5, 1));
  EXPECT_EQ(expected_of(t, 0), truth);
  // Position 2 was streamed at version 0 before the preemption; the resumed request emits from
  // num_tokens - 1 = 3.
  EXPECT_EQ(rows_of(run(t, kMain), 0), cat(own(0, 0, 3, 0), own(0, 3, 5, 1)));
  EXPECT_EQ(rows_of(run(t, kMain, {vllm::kPatchPreemptReemit}), 0), truth);
  EXPECT_EQ(rows_of(run(t, kMain, {vllm::kPatchGenerationOnWeightUpdate}), 0), cat(own(0, 0, 3, 0), own(0, 3, 5, 1)));
  // Slots follow the KV: the recompute rewrote them.
  EXPECT_EQ(rows_of(run(t, kSlots), 0), truth);
  EXPECT_EQ(rows_of(run(t, kFixed), 0), truth);
}

// N9: request 0 computes block [10, 11] at version 0; a weight update without flush; request 1
// evicts that block from vLLM's two-block pool; request 2 computes [10, 11] again at version 1
// in a chunk that samples nothing, and its final chunk reads that block back from the store.
Trace recomputed_after_weight_update(int64_t kv_slots) {
  Trace t = vllm_trace({request(0, {10, 11, 12}, {1}), request(1, {20, 21, 22}, {1}), request(2, {10, 11, 30, 31}, {1})},
                       {{{}, {extend(0, 0, 3)}},
                        {{weight_update(1, false)}, {extend(1, 0, 3)}},
                        {{}, {extend(2, 0, 2)}},
                        {{}, {extend(2, 2, 4)}}});
  t.config.kv_slots = kv_slots;
  return t;
}

TEST(VllmLifecycleRuns, MainReadsTheOldWeightsBlockForKvRecomputedWithoutAReset) {
  const Trace t = recomputed_after_weight_update(4);
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  EXPECT_EQ(expected_of(t, 2), own(2, 0, 4, 1));
  // First writer wins under (generation 0, hash of [10, 11]): request 0's version-0 rows.
  EXPECT_EQ(rows_of(run(t, kMain), 2), cat(own(0, 0, 2, 0), own(2, 2, 4, 1)));
  EXPECT_EQ(rows_of(run(t, kMain, {vllm::kPatchGenerationOnWeightUpdate}), 2), own(2, 0, 4, 1));
  EXPECT_EQ(rows_of(run(t, kMain, {vllm::kPatchPreemptReemit}), 2), cat(own(0, 0, 2, 0), own(2, 2, 4, 1)));
  EXPECT_EQ(rows_of(run(t, kSlots), 2), own(2, 0, 4, 1));
  EXPECT_EQ(rows_of(run(t, kFixed), 2), own(2, 0, 4, 1));
}

TEST(VllmLifecycleRuns, WithoutEvictionTheRecomputeIsNoScheduleAndTheHitIsRight) {
  // The defect needs the eviction: with room, vLLM hits request 0's cached block...
  Trace t = recomputed_after_weight_update(64);
  EXPECT_EQ(profile_error(t, main_profile()),
            "steps[2].run[0]: request 2 hits 0 positions where vLLM's prefix cache holds 2 (vLLM always takes the "
            "longest run of cached full blocks within num_tokens - 1: KVCacheManager.get_computed_blocks, "
            "vllm/v1/core/kv_cache_manager.py @ 003df29) under profile vllm");
  // ...and the hit's truth is that block's version-0 KV, which the store holds.
  t.steps[2] = {{hit(2, 2)}, {extend(2, 2, 4)}};
  t.steps.pop_back();
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  all_versions_return(t, 2, cat(own(0, 0, 2, 0), own(2, 2, 4, 1)));
}

TEST(VllmLifecycleRuns, AHitOnABlockRecomputedAfterEvictionIsOutsideTheTruth) {
  // Request 3 hits request 2's version-1 block; the truth names request 0's version-0 forward.
  Trace t = recomputed_after_weight_update(4);
  t.requests.push_back(request(3, {10, 11, 40}, {1}));
  t.steps.push_back({{hit(3, 2)}, {extend(3, 2, 3)}});
  EXPECT_EQ(profile_error(t, main_profile()),
            "steps[4].run[0]: request 3 hits position 0, whose KV in vLLM's prefix cache was computed at weight "
            "version 1 after the first forward of that prefix (version 0) was evicted; the truth names the first "
            "forward since the last flush (docs/TRACES.md), so this trace is outside what it models under profile vllm");
}

TEST(VllmLifecycleRuns, WeightUpdateWithFlushStartsAGeneration) {
  // After the reset request 1 recomputes [1, 2, 3] at version 1 and reads its own block back
  // under generation 1.
  const Trace t = vllm_trace({request(0, {1, 2, 3}, {4}), request(1, {1, 2, 3, 9}, {5})},
                             {{{}, {extend(0, 0, 3)}},
                              {{weight_update(1, true)}, {extend(1, 0, 2)}},
                              {{}, {extend(1, 2, 4)}}});
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  all_versions_return(t, 0, own(0, 0, 3, 0));
  all_versions_return(t, 1, own(1, 0, 4, 1));
}

TEST(VllmLifecycleRuns, MainFailsClosedOnABlockMissingFromTheStore) {
  // A flush in the middle of a chunked prefill: vLLM's reset would refuse while the request holds
  // KV, so the profile refuses the trace. Run anyway, main's worker drops the request's state at
  // the new generation, and the final chunk's read of block 0 under generation 1 raises (V6).
  const Trace t = vllm_trace({request(0, {1, 2, 3, 4}, {5})},
                             {{{}, {extend(0, 0, 2)}}, {{weight_update(1, true)}, {extend(0, 2, 4)}}});
  EXPECT_EQ(profile_error(t, main_profile()).rfind("steps[1].events[0]: weight_update with flush while request 0 holds KV "
                                                  "blocks",
                                                  0),
            0u);
  char hash[19];
  std::snprintf(hash, sizeof hash, "0x%016llx",
                static_cast<unsigned long long>(prefix_hashes(std::vector<int32_t>{1, 2})[1]));
  const LifecycleOutcome out = run(t, kMain);
  EXPECT_EQ(out.crash_step, 1);
  EXPECT_EQ(out.crash,
            "step 1: BlockObjectStoreError: auxiliary output object does not exist; the object may have been evicted "
            "(request 0, blocks 0 to 1, generation 1, first block hash " + std::string(hash) + ", limit 33 objects)");
  EXPECT_EQ(out.requests[0].status, RequestRoutes::Status::not_finished);
  // The slots still hold the version-0 rows of the KV the request keeps.
  EXPECT_EQ(rows_of(run(t, kSlots), 0), cat(own(0, 0, 2, 0), own(0, 2, 4, 1)));
  EXPECT_EQ(expected_of(t, 0), cat(own(0, 0, 2, 0), own(0, 2, 4, 1)));
}

TEST(VllmLifecycleRuns, AbortedWaitingRequestReturnsNothingAndARunningOneItsRows) {
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5}, Finish::abort), request(1, {7, 8}, {}, Finish::abort)},
                       {{{on(Kind::abort, 1)}, {extend(0, 0, 3)}}, {{}, {decode(0, 3)}}, {{on(Kind::abort, 0)}, {}}});
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  all_versions_return(t, 0, own(0, 0, 4));
  for (std::string_view version : {kMain, kSlots, kFixed}) {
    const LifecycleOutcome out = run(t, version);
    EXPECT_EQ(out.requests[1].status, RequestRoutes::Status::none) << version;
    EXPECT_TRUE(out.requests[1].rows.empty()) << version;
  }
}

TEST(VllmLifecycleRuns, AsyncSchedulingsLaggingRowIsNeverReturned) {
  // Request 0 stops on eos at step 1; under async scheduling step 2 already carries its decode
  // of position 4, whose row must not appear (5 rows would be one too many).
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5}, Finish::eos), request(1, {9, 9, 9}, {1, 2, 3})},
                       {{{}, {extend(0, 0, 3), extend(1, 0, 3)}},
                        {{}, {decode(0, 3), decode(1, 3)}},
                        {{}, {decode(0, 4), decode(1, 4)}}});
  t.requests[0].max_new = 4;
  t.config.overlap = true;
  EXPECT_EQ(timeline_of(t).steps[2].rows[0][0], (BatchRow{0, 4, false, true}));
  all_versions_return(t, 0, own(0, 0, 4));
  all_versions_return(t, 1, own(1, 0, 5));
}

TEST(VllmLifecycleRuns, SpecDecodingKeepsAcceptedRowsAndDropsRejectedDrafts) {
  // Width 2: step 1 keeps 3 and 4 (draft 5 rejected), step 2 keeps 5 (drafts 6, 7 rejected).
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5, 6, 7})},
                       {{{}, {extend(0, 0, 3)}}, {{}, {verify(0, 3, 1)}}, {{}, {verify(0, 5, 0)}}});
  t.config.spec = SpecConfig{2, false};
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  all_versions_return(t, 0, own(0, 0, 6));
}

TEST(VllmLifecycleRuns, SpecDecodingStopInsideTheAcceptedRunCutsThere) {
  // Verify at 3 accepts both drafts (3, 4, 5 kept, 3 tokens sampled) but the eos is the second
  // output: S = 5 and position 4 is the last row.
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5}, Finish::eos)}, {{{}, {extend(0, 0, 3)}}, {{}, {verify(0, 3, 2)}}});
  t.requests[0].max_new = 4;
  t.config.spec = SpecConfig{2, false};
  all_versions_return(t, 0, own(0, 0, 4));
}

TEST(VllmLifecycleRuns, CudaGraphPaddingNeverReachesARequest) {
  // Decode steps of 2 rows run in the size-2 graph; the padding rows are in no request's rows.
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5, 6}), request(1, {7, 8, 9}, {1, 2, 3})},
                       {{{}, {extend(0, 0, 3), extend(1, 0, 3)}},
                        {{}, {decode(0, 3), decode(1, 3)}},
                        {{}, {decode(0, 4), decode(1, 4)}}});
  t.config.cuda_graph_decode = {1, 4};
  const std::optional<Case> c = model().step_case(t, timeline_of(t), 1);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->padding, (Padding{PaddingMode::cudagraph, {1, 4}}));
  all_versions_return(t, 0, own(0, 0, 5));
  all_versions_return(t, 1, own(1, 0, 5));
}

// A three-block pool (page 2): request 0 is offloaded after its first decode, request 1 takes
// the blocks and evicts request 0's second block, and the restore lands position 2 in the slot
// request 1 wrote (position 3 finds request 0's own old row there).
Trace offloaded_and_restored() {
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5, 6}), request(1, {20, 21, 22}, {1})},
                       {{{}, {extend(0, 0, 3)}},
                        {{}, {decode(0, 3)}},
                        {{on(Kind::offload, 0)}, {}},
                        {{}, {extend(1, 0, 3)}},
                        {{on(Kind::restore, 0)}, {decode(0, 4)}}});
  t.config.kv_slots = 6;
  t.knobs = {{"config.kv_connector", "\"offload\""}};
  t.profile = legacy_profile();
  return t;
}

TEST(VllmLifecycleRuns, SlotKeyedRowsGoStaleAcrossOffloadAndRestore) {
  const Trace t = offloaded_and_restored();
  EXPECT_EQ(profile_error(t, legacy_profile()), "runs");
  EXPECT_EQ(expected_of(t, 0), own(0, 0, 5));
  const std::vector<RouteRef> stale = {route(0, 0), route(0, 1), route(1, 2), route(0, 3), route(0, 4)};
  EXPECT_EQ(rows_of(run(t, kSlots), 0), stale);
  EXPECT_EQ(rows_of(run(t, kSlots, {vllm::kPatchPdRows}), 0), stale);
  EXPECT_EQ(rows_of(run(t, kSlots, {vllm::kPatchOffloadRows}), 0), own(0, 0, 5));
  EXPECT_EQ(rows_of(run(t, kFixed), 0), own(0, 0, 5));
  // Main keys rows by block hash, not slot: right, but its start-up refuses the connector
  // (N5, reading (a)).
  EXPECT_EQ(rows_of(run(t, kMain), 0), own(0, 0, 5));
  EXPECT_EQ(profile_error(t, main_profile()),
            "knobs.config.kv_connector: vLLM main refuses KV connector \"offload\" with routed-experts capture at "
            "start-up (the docs name Nixl, NixlPull, NixlPush, MoRIIO and Mooncake; contract N5, reading (a): every "
            "connector) under profile vllm");
}

// Request 0 ran on the decode instance first; request 1's prompt KV arrives from a prefill
// instance into a never-written block (positions 0, 1) and request 0's old block (position 2).
Trace prefilled_elsewhere() {
  Trace t = vllm_trace({request(0, {20, 21, 22}, {1}), request(1, {1, 2, 3}, {4, 5, 6})},
                       {{{}, {extend(0, 0, 3)}},
                        {{on(Kind::pd_handoff, 1)}, {decode(1, 3)}},
                        {{}, {decode(1, 4)}}});
  t.config.kv_slots = 6;
  t.knobs = {{"config.kv_connector", "\"nixl\""}};
  t.profile = legacy_profile();
  return t;
}

TEST(VllmLifecycleRuns, SlotKeyedPromptRowsAreStaleOnTheDecodeInstance) {
  const Trace t = prefilled_elsewhere();
  EXPECT_EQ(profile_error(t, legacy_profile()), "runs");
  EXPECT_EQ(expected_of(t, 1), own(1, 0, 5));
  const std::vector<RouteRef> stale = {zeros(), zeros(), route(0, 2), route(1, 3), route(1, 4)};
  EXPECT_EQ(rows_of(run(t, kSlots), 1), stale);
  EXPECT_EQ(rows_of(run(t, kSlots, {vllm::kPatchOffloadRows}), 1), stale);
  EXPECT_EQ(rows_of(run(t, kSlots, {vllm::kPatchPdRows}), 1), own(1, 0, 5));
  EXPECT_EQ(rows_of(run(t, kFixed), 1), own(1, 0, 5));
  // Main never sees the prompt: it emits from num_tokens - 1. Its start-up refuses P/D.
  EXPECT_EQ(rows_of(run(t, kMain), 1), own(1, 3, 5));
  EXPECT_EQ(profile_error(t, main_profile()),
            "knobs.config.kv_connector: vLLM main refuses KV connector \"nixl\" with routed-experts capture at "
            "start-up (the docs name Nixl, NixlPull, NixlPush, MoRIIO and Mooncake; contract N5, reading (a): every "
            "connector) under profile vllm");
}

TEST(VllmLifecycleRuns, ACaptureThatRaisesCrashesTheEngineAtItsStep) {
  const Trace t = vllm_trace({request(0, {1, 2}, {3}), request(1, {4, 5, 6}, {7, 8})},
                             {{{}, {extend(0, 0, 2), extend(1, 0, 3)}}, {{}, {decode(1, 3)}}});
  const Timeline timeline = timeline_of(t);
  std::vector<StepDelivery> delivery = {identity_delivery(timeline.steps[0]), identity_delivery(timeline.steps[1])};
  delivery[1].raised = "capture buffer holds 1 rows, 2 to write";
  for (std::string_view version : {kMain, kSlots, kFixed}) {
    const LifecycleOutcome out = model().run(t, timeline, delivery, version, {});
    EXPECT_EQ(out.crash_step, 1) << version;
    EXPECT_EQ(out.crash, "step 1: capture buffer holds 1 rows, 2 to write") << version;
    EXPECT_EQ(out.requests[0].status, RequestRoutes::Status::returned) << version;
    EXPECT_EQ(out.requests[0].rows, own(0, 0, 2)) << version;
    EXPECT_EQ(out.requests[1].status, RequestRoutes::Status::not_finished) << version;
  }
}

TEST(VllmLifecycleRuns, DeliveredRowsAreWhatTheVersionsReturn) {
  // A per-step capture that misplaces rows shows in the requests it corrupts: request 0's
  // second row delivered as request 1's.
  const Trace t = vllm_trace({request(0, {1, 2, 3}, {4}), request(1, {4, 5, 6}, {7})},
                             {{{}, {extend(0, 0, 3), extend(1, 0, 3)}}});
  const Timeline timeline = timeline_of(t);
  std::vector<StepDelivery> delivery = {identity_delivery(timeline.steps[0])};
  delivery[0].rows[0][1] = route(1, 1);
  for (std::string_view version : {kMain, kSlots, kFixed}) {
    const LifecycleOutcome out = model().run(t, timeline, delivery, version, {});
    EXPECT_EQ(out.requests[0].rows, (std::vector<RouteRef>{route(0, 0), route(1, 1), route(0, 2)})) << version;
  }
}

}  // namespace
}  // namespace r3

namespace r3 {
namespace {

using namespace test::vllm_trace;

TEST(VllmLifecycleRunsPreempted, AnAbortBeforeTheRecomputeReadsFreedBlocksInTheReleases) {
  // Preempted after two decodes, aborted before it runs again (vLLM ends an abort at once): the
  // slot-keyed releases read its freed blocks (zeros); main streamed the rows already; the fixed
  // model, and the releases with patch preempted-rows, keep them.
  const Trace t = vllm_trace({request(0, {1}, {2, 3, 4}, Finish::abort)}, {{{}, {extend(0, 0, 1)}},
                                                                          {{}, {decode(0, 1)}},
                                                                          {{}, {decode(0, 2)}},
                                                                          {{on(TraceEvent::Kind::preempt, 0)}, {}},
                                                                          {{on(TraceEvent::Kind::abort, 0)}, {}}});
  EXPECT_EQ(expected_of(t, 0), own(0, 0, 3));
  EXPECT_EQ(rows_of(run(t, "vllm-pre-50874"), 0), (std::vector<RouteRef>{zeros(), zeros(), zeros()}));
  EXPECT_EQ(rows_of(run(t, "vllm-pre-50874", {vllm::kPatchPreemptedRows}), 0), own(0, 0, 3));
  EXPECT_EQ(rows_of(run(t, "vllm-50874"), 0), own(0, 0, 3));
  EXPECT_EQ(rows_of(run(t, "r3-fixed"), 0), own(0, 0, 3));
}

}  // namespace
}  // namespace r3
