// SGLang's LifecycleModel (reference/engines/sglang/lifecycle*.cpp): its versions and patches,
// the engine hook, check() and check_profile() with their exact texts, and step_case().
#include "reference/engines/sglang/lifecycle.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference/engines/sglang/model.hpp"
#include "tests/reference/engines/sglang/lifecycle_fixtures.hpp"

namespace r3::test {
namespace {

const LifecycleModel& model() { return sglang::lifecycle_model(); }
Profile upstream_profile() { return Profile::of(sglang::engine(), 0); }

std::string check_error(const Trace& t) {
  const Result<Timeline> timeline = build_timeline(t);
  if (!timeline.ok()) return "timeline: " + timeline.error().message;
  const Status s = model().check(t, *timeline);
  return s.ok() ? "" : s.error().message;
}

std::string profile_error(const Trace& t, Profile p = upstream_profile()) {
  const Result<Timeline> timeline = validate_trace(t);
  if (!timeline.ok()) return "check: " + timeline.error().message;
  const Status s = model().check_profile(t, *timeline, p);
  return s.ok() ? "" : s.error().message;
}

Trace one_request() {
  Trace t = sglang_trace();
  t.requests = {request(0, {1, 2, 3}, {4, 5})};
  t.steps = {step({extend(0, 0, 3)}), step({decode(0, 3)})};
  return t;
}

TEST(SglangLifecycle, ThreeVersionsInOrder) {
  const auto versions = model().versions();
  ASSERT_EQ(versions.size(), 3u);
  EXPECT_EQ(versions[0].name, "sglang");
  EXPECT_EQ(versions[0].policy, "sglang");
  EXPECT_EQ(versions[0].profile, "sglang");
  EXPECT_TRUE(versions[0].released);
  EXPECT_EQ(versions[1].name, "sglang-miles");
  EXPECT_EQ(versions[1].policy, "sglang-miles");
  EXPECT_EQ(versions[1].profile, "sglang-miles");
  EXPECT_TRUE(versions[1].released);
  EXPECT_EQ(versions[2].name, "sglang-fixed");
  EXPECT_EQ(versions[2].policy, "sglang-fixed");
  EXPECT_EQ(versions[2].profile, "sglang");
  EXPECT_FALSE(versions[2].released);
}

TEST(SglangLifecycle, PatchesAndWhatEachVersionLacks) {
  std::vector<std::string> names;
  for (const LifecyclePatch& p : model().patches()) names.emplace_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"offload-rows", "pd-prompt-rows", "tree-accept-rows",
                                             "ngram-overlap-capture", "overlap-copy-race", "aborted-rows"}));
  for (const LifecyclePatch& p : model().patches())
    EXPECT_NE(std::string(p.what).find("@ 30cb848"), std::string::npos) << p.name;
  EXPECT_EQ(model().missing_patches("sglang"), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  // sglang-miles splices the prefill's rows only behind mini_lb, so it still lacks pd-prompt-rows.
  EXPECT_EQ(model().missing_patches("sglang-miles"), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(model().missing_patches("sglang-fixed").empty());
  EXPECT_TRUE(model().missing_patches("vllm").empty());
}

TEST(SglangLifecycle, TheEngineHandsItOut) {
  EXPECT_EQ(sglang::model().lifecycle(), &model());
  EXPECT_EQ(lifecycle_of(sglang::engine()), &model());
  const std::optional<FoundVersion> found = find_lifecycle_version("sglang-miles");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->engine, sglang::engine());
  EXPECT_EQ(found->version->policy, "sglang-miles");
}

TEST(SglangLifecycle, CheckNamesTheUnknownKnobAndListsTheKnownOnes) {
  Trace t = one_request();
  t.knobs = {{"config.swap", "true"}};
  EXPECT_EQ(check_error(t),
            "knobs: \"config.swap\" is not an SGLang knob; SGLang takes config.hicache, config.mixed_chunk, "
            "config.overlap_copy_race, config.pd_router, config.spec_algorithm, topology.a2a, topology.dp_attention");
  t.knobs = {{"topology.a2a", "\"deep\""}};
  EXPECT_EQ(check_error(t),
            "knobs.topology.a2a: \"deep\" is not one of none, deepep, mooncake, nixl, mori, flashinfer, "
            "megamoe, pplx, ascend_fuseep");
  t.knobs = {{"topology.a2a", "\"deepep\""}};
  EXPECT_EQ(check_error(t), "");
  t.knobs = {{"config.hicache", "yes"}};
  EXPECT_EQ(check_error(t), "knobs.config.hicache: yes is neither true nor false");
  t.knobs = {{"config.pd_router", "\"nginx\""}};
  EXPECT_EQ(check_error(t), "knobs.config.pd_router: \"nginx\" is not one of none, mini_lb");
  t.knobs = {{"topology.dp_attention", "true"}};
  EXPECT_EQ(check_error(t),
            "knobs.topology.dp_attention: true needs topology.dp > 1 (DP attention runs dp > 1 "
            "attention-DP ranks)");
  t.knobs = {{"config.spec_algorithm", "\"ngram\""}};
  EXPECT_EQ(check_error(t),
            "knobs.config.spec_algorithm: ngram needs config.spec (its width and whether the drafts "
            "form a tree)");
  t.knobs = {{"config.overlap_copy_race", "true"}};
  EXPECT_EQ(check_error(t),
            "knobs.config.overlap_copy_race: needs config.overlap (the race is the overlap scheduler's "
            "deferred copy)");
}

TEST(SglangLifecycle, CheckWantsPageAlignedHits) {
  Trace t = sglang_trace(2);
  t.config.prefix_cache = true;
  t.requests = {request(0, {1, 2, 3, 4}, {5}), request(1, {1, 2, 3, 7}, {8})};
  t.steps = {step({extend(0, 0, 4)}), step({extend(1, 3, 4)}, {hit(1, 3)})};
  EXPECT_EQ(check_error(t),
            "steps[1].events[0].hit: request 1 hits 3 positions, not a multiple of config.page = 2 "
            "(SGLang's radix tree matches whole pages: mem_cache/radix_cache.py, RadixKey.page_aligned)");
  t.steps = {step({extend(0, 0, 4)}), step({extend(1, 2, 4)}, {hit(1, 2)})};
  EXPECT_EQ(check_error(t), "");
}

TEST(SglangLifecycle, AFlushWithRequestsPendingFails) {
  Trace t = sglang_trace();
  t.requests = {request(0, {1, 2, 3}, {4, 5}), request(1, {6, 7}, {8})};
  t.steps = {step({extend(0, 0, 3)}), step({decode(0, 3)}, {weights(1, true)}), step({extend(1, 0, 2)})};
  const std::string why =
      "steps[1].events[0].weight_update: request 0 is pending (queued or running), so flush_cache refuses and "
      "flush_cache_after_weight_update asserts (\"Cache flush failed after updating weights\"; "
      "scheduler_components/weight_updater.py @ 30cb848)";
  EXPECT_EQ(profile_error(t), why);
  // run() answers the same trace with that crash.
  const Timeline timeline = *validate_trace(t);
  const LifecycleOutcome out = model().run(t, timeline, identity_deliveries(timeline), "sglang", {});
  EXPECT_EQ(out.crash_step, 1);
  EXPECT_EQ(out.crash, "step 1: " + why);
  EXPECT_EQ(out.requests[0].status, RequestRoutes::Status::not_finished);
}

TEST(SglangLifecycle, CheckProfileRefusesWhatSglangNeverSchedules) {
  // A decode beside an extend on one rank needs mixed chunked prefill.
  Trace t = sglang_trace();
  t.requests = {request(0, {1, 2}, {3, 4}), request(1, {5, 6}, {7})};
  t.steps = {step({extend(0, 0, 2)}), step({decode(0, 2), extend(1, 0, 2)})};
  EXPECT_EQ(profile_error(t),
            "steps[1]: DP rank 0 mixes extend and decode rows in one batch, which SGLang does only "
            "with --enable-mixed-chunk (knobs.config.mixed_chunk), chunked prefill on and no "
            "speculative decoding (scheduler.py, is_mixed_chunk and the mixed-style chunked prefill "
            "branch)");
  t.config.chunk = 4;
  t.knobs = {{"config.mixed_chunk", "true"}};
  EXPECT_EQ(profile_error(t), "");
  EXPECT_EQ(profile_error(t, Profile::of(sglang::engine(), 1)), "");
  EXPECT_EQ(profile_error(t, Profile::any()), "");

  // An extend batch larger than the chunk.
  Trace big = one_request();
  big.config.chunk = 2;
  EXPECT_EQ(profile_error(big),
            "steps[0]: DP rank 0 forwards 3 rows in an extend batch, over config.chunk = 2 "
            "(schedule_policy.py, PrefillAdder: rem_chunk_tokens, less the mixed decode rows)");

  // Offload outside P/D.
  Trace off = sglang_trace();
  off.requests = {request(0, {1, 2}, {3, 4, 5})};
  off.steps = {step({extend(0, 0, 2)}), step({}, {on(TraceEvent::Kind::offload, 0)}),
               step({decode(0, 2)}, {on(TraceEvent::Kind::restore, 0)})};
  EXPECT_EQ(profile_error(off),
            "steps[1].events[0].offload: request 0: SGLang offloads a retracted request's KV to host "
            "only on a P/D decode instance (schedule_batch.py, release_req: offload_kv_cache in "
            "decode disaggregation mode)");

  // HiCache with the radix cache off.
  Trace hc = one_request();
  hc.knobs = {{"config.hicache", "true"}};
  EXPECT_EQ(profile_error(hc),
            "knobs.config.hicache: HiCache with the radix cache off is refused at start-up "
            "(server_args.py, _handle_cache_compatibility: enable-hierarchical-cache and "
            "disable-radix-cache are mutually exclusive)");

  // Another engine's profile.
  const Result<Engine> vllm = parse_engine("vllm");
  ASSERT_TRUE(vllm.ok());
  EXPECT_EQ(profile_error(one_request(), Profile::of(*vllm, 0)),
            "profile vllm is not one of SGLang's (sglang, sglang-miles)");
}

// Request 0's KV was evicted to make room for request 1; without HiCache nothing holds it.
TEST(SglangLifecycle, CheckProfileRefusesAHitTheTreeNoLongerHolds) {
  Trace t = sglang_trace(1, 6);
  t.config.prefix_cache = true;
  t.requests = {request(0, {1, 2, 3, 4}, {5}), request(1, {9, 9, 9, 9}, {8}), request(2, {1, 2, 3, 4, 6}, {7})};
  t.steps = {step({extend(0, 0, 4)}), step({extend(1, 0, 4)}), step({extend(2, 4, 5)}, {hit(2, 4)})};
  EXPECT_EQ(profile_error(t),
            "steps[2].events[0].hit: request 2 position 1 is not in the radix tree of DP rank 0 "
            "(freed, evicted, or computed on another rank), so SGLang's match_prefix stops short of it");
  t.knobs = {{"config.hicache", "true"}};
  EXPECT_EQ(profile_error(t), "");
}

TEST(SglangLifecycle, CheckProfileRefusesABatchWhoseKvDoesNotFit) {
  Trace t = sglang_trace(1, 4);  // slots 1-3
  t.requests = {request(0, {1, 2, 3, 4}, {5})};
  t.steps = {step({extend(0, 0, 4)})};
  EXPECT_EQ(profile_error(t),
            "steps[0]: DP rank 0 needs 4 free KV pages of config.page = 1 (config.kv_slots = 4, page 0 "
            "reserved) beyond what freeing and evicting give; SGLang's scheduler retracts or waits "
            "rather than run it (schedule_policy.py, PrefillAdder; ScheduleBatch.check_decode_mem)");
}

// The timeline lets an aborted request run once more and end there; SGLang never runs a chunked
// prefill again once it is aborted.
TEST(SglangLifecycle, CheckProfileRefusesAnAbortedChunkRunningAgain) {
  Trace t = sglang_trace();
  t.config.chunk = 2;
  t.requests = {request(0, {1, 2, 3, 4}, {5}, Finish::abort)};
  t.steps = {step({extend(0, 0, 2)}), step({extend(0, 2, 4)}, {on(TraceEvent::Kind::abort, 0)})};
  EXPECT_EQ(profile_error(t),
            "steps[1].events[0].abort: request 0 is not decoding (retracted, or in the middle of a "
            "chunked prefill), and SGLang's abort ends it before it runs again (scheduler.py, "
            "abort_request and process_pending_chunked_abort)");
}

TEST(SglangLifecycle, CheckProfileRefusesPdRequestsTheDecodeInstancePrefills) {
  Trace t = sglang_trace();
  t.requests = {request(0, {1, 2}, {3, 4}), request(1, {5, 6}, {7})};
  t.steps = {step({decode(0, 2)}, {on(TraceEvent::Kind::pd_handoff, 0)}), step({extend(1, 0, 2)})};
  EXPECT_EQ(profile_error(t),
            "steps[1]: request 1 runs on the decode instance without a pd_handoff; a P/D decode "
            "instance never prefills a request itself (disaggregation/decode.py)");
}

TEST(SglangLifecycle, StepCaseOfAChunkedExtend) {
  Trace t = one_request();
  t.config.chunk = 4;
  const Timeline timeline = checked_timeline(t);
  const std::optional<Case> c = model().step_case(t, timeline, 0);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->engine, sglang::engine());
  EXPECT_EQ(c->tokens, (std::vector<int64_t>{3}));
  const sglang::Forward* f = sglang::forward_of(*c);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kind, sglang::ForwardKind::extend);
  EXPECT_EQ(f->chunked_prefill_size, 4);
  EXPECT_EQ(f->max_prefill_tokens, 8);
  EXPECT_EQ(f->max_running_requests, 8);
  EXPECT_FALSE(f->dp_attention);
  EXPECT_FALSE(f->cuda_graph.has_value());
}

TEST(SglangLifecycle, StepCaseOfGraphDecodesCarriesTheLastReplayedBucket) {
  Trace t = sglang_trace();
  t.config.cuda_graph_decode = {2, 4};
  t.requests = {request(0, {1, 2, 3}, {4, 5, 6}), request(1, {8, 9}, {10, 11})};
  t.steps = {step({extend(0, 0, 3), extend(1, 0, 2)}), step({decode(0, 3), decode(1, 2)}), step({decode(0, 4)})};
  const Timeline timeline = checked_timeline(t);
  const std::optional<Case> first = model().step_case(t, timeline, 1);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(sglang::forward_of(*first)->kind, sglang::ForwardKind::decode);
  EXPECT_EQ(sglang::forward_of(*first)->requests, (std::vector<int64_t>{2}));
  EXPECT_EQ(sglang::forward_of(*first)->cuda_graph, (sglang::CudaGraphs{{2, 4}, {}}));
  EXPECT_FALSE(sglang::forward_of(*first)->last_decode_bucket.has_value());
  const std::optional<Case> second = model().step_case(t, timeline, 2);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(sglang::forward_of(*second)->requests, (std::vector<int64_t>{1}));
  EXPECT_EQ(sglang::forward_of(*second)->last_decode_bucket, 2);
}

TEST(SglangLifecycle, StepCaseOfAVerifyAndOfDpAttention) {
  Trace t = sglang_trace();
  t.dp = 2;
  t.config.spec = SpecConfig{2, false};
  t.requests = {request(0, {1, 2, 3}, {4, 5, 6}, Finish::length, 0), request(1, {7, 8}, {9, 10}, Finish::length, 1)};
  t.steps = {step({extend(0, 0, 3), extend(1, 0, 2)}), step({verify(0, 3, 1), verify(1, 2, 0)})};
  const Timeline timeline = checked_timeline(t);
  const std::optional<Case> prefill = model().step_case(t, timeline, 0);
  ASSERT_TRUE(prefill.has_value());
  EXPECT_EQ(prefill->tokens, (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(sglang::forward_of(*prefill)->dp_attention);
  const std::optional<Case> v = model().step_case(t, timeline, 1);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(sglang::forward_of(*v)->kind, sglang::ForwardKind::verify);
  EXPECT_EQ(sglang::forward_of(*v)->requests, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(sglang::forward_of(*v)->spec_width, 3);
  // Two replicas without DP attention are two engines: no one-step case holds them.
  t.knobs = {{"topology.dp_attention", "false"}};
  EXPECT_FALSE(model().step_case(t, *validate_trace(t), 0).has_value());
}

}  // namespace
}  // namespace r3::test
