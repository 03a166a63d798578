// vLLM's lifecycle model (reference/engines/vllm/lifecycle*.cpp): its versions and patches, the
// rules it adds to a trace (check), what each profile refuses (check_profile), and the one-step
// case of a trace step (step_case). The rows each version returns: lifecycle_runs_test.cpp.
#include <gtest/gtest.h>

#include "reference/profile.hpp"
#include "reference/validate.hpp"
#include "tests/reference/engines/vllm/lifecycle_fixtures.hpp"

namespace r3 {
namespace {

using namespace test::vllm_trace;
using Kind = TraceEvent::Kind;

std::string check_error(const Trace& t) {
  const Result<Timeline> timeline = validate_trace(t);
  return timeline.ok() ? "valid" : timeline.error().message;
}

Trace one_request() {
  return vllm_trace({request(0, {1, 2, 3}, {4, 5})}, {{{}, {extend(0, 0, 3)}}, {{}, {decode(0, 3)}}});
}

TEST(VllmLifecycle, IsVllmsEngineModelsLifecycle) {
  EXPECT_EQ(lifecycle_of(vllm::engine()), &model());
  const std::optional<FoundVersion> found = find_lifecycle_version("vllm-pre-50874");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->engine, vllm::engine());
  EXPECT_EQ(found->model, &model());
}

TEST(VllmLifecycle, VersionsRunTheirPoliciesUnderTheirProfiles) {
  const auto versions = model().versions();
  ASSERT_EQ(versions.size(), 3u);
  EXPECT_EQ(versions[0].name, "vllm-50874");
  EXPECT_EQ(versions[0].policy, "vllm-50874");
  EXPECT_EQ(versions[0].profile, "vllm");
  EXPECT_TRUE(versions[0].released);
  EXPECT_EQ(versions[1].name, "vllm-pre-50874");
  EXPECT_EQ(versions[1].policy, "vllm-pre-50874");
  EXPECT_EQ(versions[1].profile, "vllm-legacy");
  EXPECT_TRUE(versions[1].released);
  EXPECT_EQ(versions[2].name, "r3-fixed");
  EXPECT_EQ(versions[2].policy, "r3-fixed");
  EXPECT_EQ(versions[2].profile, "vllm");
  EXPECT_FALSE(versions[2].released);
  // Every policy and profile named is one vLLM's engine model registers.
  for (const LifecycleVersion& v : versions) {
    EXPECT_TRUE(parse_profile(v.profile).ok()) << v.profile;
    const auto policies = vllm::model().policies();
    EXPECT_TRUE(std::any_of(policies.begin(), policies.end(), [&](const PolicyInfo& p) { return p.name == v.policy; }))
        << v.policy;
  }
}

TEST(VllmLifecycle, PatchesAndWhichVersionLacksThem) {
  const auto patches = model().patches();
  ASSERT_EQ(patches.size(), 6u);
  EXPECT_EQ(patches[vllm::kPatchGenerationOnWeightUpdate].name, "generation-on-weight-update");
  EXPECT_EQ(patches[vllm::kPatchPreemptReemit].name, "preempt-reemit");
  EXPECT_EQ(patches[vllm::kPatchOffloadRows].name, "offload-rows");
  EXPECT_EQ(patches[vllm::kPatchPdRows].name, "pd-rows");
  EXPECT_EQ(patches[vllm::kPatchPreemptedRows].name, "preempted-rows");
  EXPECT_EQ(patches[vllm::kPatchStoreCapacity].name, "store-capacity");
  for (const LifecyclePatch& p : patches) EXPECT_NE(p.what.find(" @ "), std::string_view::npos) << p.name;  // cites a commit
  EXPECT_EQ(model().missing_patches("vllm-50874"),
            (std::vector<int>{vllm::kPatchGenerationOnWeightUpdate, vllm::kPatchPreemptReemit,
                              vllm::kPatchStoreCapacity}));
  EXPECT_EQ(model().missing_patches("vllm-pre-50874"),
            (std::vector<int>{vllm::kPatchOffloadRows, vllm::kPatchPdRows, vllm::kPatchPreemptedRows}));
  EXPECT_TRUE(model().missing_patches("r3-fixed").empty());
}

TEST(VllmLifecycle, UnknownVersionCrashesAtStepZero) {
  const LifecycleOutcome out = run(one_request(), "vllm-v3");
  EXPECT_EQ(out.crash_step, 0);
  EXPECT_EQ(out.crash, "step 0: no vLLM lifecycle version \"vllm-v3\"");
  EXPECT_EQ(out.requests.size(), 1u);
}

TEST(VllmLifecycle, KnobsAreNamedAndValued) {
  Trace t = one_request();
  EXPECT_EQ(check_error(t), "valid");
  t.knobs = {{"topology.a2a", "\"none\""}};
  EXPECT_EQ(check_error(t), "knobs: \"topology.a2a\" is not a vllm knob (known: config.kv_connector, config.spec_adaptive)");
  t.knobs = {{"config.kv_connector", "\"lmcache\""}};
  EXPECT_EQ(check_error(t),
            "knobs.config.kv_connector: \"lmcache\" is not one of none, offload, nixl, nixl_pull, nixl_push, moriio, "
            "mooncake (a JSON string)");
  t.knobs = {{"config.kv_connector", "nixl"}};
  EXPECT_EQ(check_error(t),
            "knobs.config.kv_connector: nixl is not one of none, offload, nixl, nixl_pull, nixl_push, moriio, mooncake "
            "(a JSON string)");
  t.knobs = {{"config.spec_adaptive", "1"}};
  EXPECT_EQ(check_error(t), "knobs.config.spec_adaptive: 1 is not true or false");
  t.knobs = {{"config.spec_adaptive", "true"}};
  EXPECT_EQ(check_error(t), "knobs.config.spec_adaptive: true needs speculative decoding (config.spec)");
  t.knobs = {{"config.kv_connector", "\"none\""}, {"config.spec_adaptive", "false"}};
  EXPECT_EQ(check_error(t), "valid");
}

TEST(VllmLifecycle, HitsAreWholeBlocks) {
  Trace t = vllm_trace({request(0, {5, 6, 7, 8, 9}, {1}), request(1, {5, 6, 7, 8, 4, 4}, {2})},
                       {{{}, {extend(0, 0, 5)}}, {{hit(1, 3)}, {extend(1, 3, 6)}}});
  EXPECT_EQ(check_error(t),
            "steps[1].events[0]: hit of request 1 covers 3 positions, not a multiple of config.page 2 (vLLM hits "
            "whole blocks: KVCacheManager.get_computed_blocks, vllm/v1/core/kv_cache_manager.py @ 003df29)");
  t.steps[1] = {{hit(1, 4)}, {extend(1, 4, 6)}};
  EXPECT_EQ(check_error(t), "valid");
}

TEST(VllmLifecycle, SpecTreesAndTinyPoolsAreNotVllm) {
  Trace t = one_request();
  t.config.spec = SpecConfig{2, true};
  EXPECT_EQ(check_error(t),
            "config.spec.tree: vLLM's lifecycle is modelled for chain drafts only (a verify keeps its accepted "
            "prefix: process_output, vllm/distributed/aux_output_connector/worker.py @ f99d53b)");
  t = one_request();
  t.config.kv_slots = 1;
  EXPECT_EQ(check_error(t), "config.kv_slots: 1 slots hold no whole block of config.page 2");
}

TEST(VllmLifecycle, KvMovesNeedAConnector) {
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5, 6})},
                       {{{}, {extend(0, 0, 3)}}, {{on(Kind::offload, 0)}, {}}, {{on(Kind::restore, 0)}, {decode(0, 3)}}});
  EXPECT_EQ(check_error(t),
            "steps[1].events[0]: offload of request 0 needs knob config.kv_connector \"offload\" (vLLM moves KV to "
            "host and back only through a KV connector), it is \"none\"");
  t.knobs = {{"config.kv_connector", "\"offload\""}};
  EXPECT_EQ(check_error(t), "valid");
  Trace pd = vllm_trace({request(0, {1, 2, 3}, {4, 5, 6})}, {{{on(Kind::pd_handoff, 0)}, {decode(0, 3)}}});
  pd.knobs = {{"config.kv_connector", "\"offload\""}};
  EXPECT_EQ(check_error(pd),
            "steps[0].events[0]: pd_handoff of request 0 needs a P/D connector in knob config.kv_connector (nixl, "
            "nixl_pull, nixl_push, moriio, mooncake), it is \"offload\"");
  pd.knobs = {{"config.kv_connector", "\"mooncake\""}};
  EXPECT_EQ(check_error(pd), "valid");
}

TEST(VllmLifecycle, MainRefusesWhatItsStartUpRefuses) {
  Trace t = one_request();
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  t.config.prefix_cache = false;
  EXPECT_EQ(profile_error(t, main_profile()),
            "config.prefix_cache: vLLM main's routed-experts capture requires prefix caching (docs.vllm.ai "
            "training/routed_experts; contract 2.3) under profile vllm");
  EXPECT_EQ(profile_error(t, legacy_profile()), "runs");
  t = one_request();
  t.config.spec = SpecConfig{1, false};
  t.knobs = {{"config.spec_adaptive", "true"}};
  EXPECT_EQ(profile_error(t, main_profile()),
            "knobs.config.spec_adaptive: vLLM main refuses adaptive speculative verification with routed-experts "
            "capture at start-up (docs.vllm.ai training/routed_experts; contract 2.3) under profile vllm");
  t.knobs = {{"config.spec_adaptive", "false"}};
  EXPECT_EQ(profile_error(t, main_profile()), "runs");
  EXPECT_EQ(profile_error(t, Profile::any()), "runs");
  EXPECT_EQ(profile_error(t, parse_profile("sglang").value()), "profile: sglang is not a vllm profile");
}

TEST(VllmLifecycle, ScheduleRulesOfVllmsScheduler) {
  // A flush while a request holds KV: reset_prefix_cache refuses unless it preempts them all.
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5})},
                       {{{}, {extend(0, 0, 3)}}, {{weight_update(1, true)}, {decode(0, 3)}}});
  const std::string flush =
      "steps[1].events[0]: weight_update with flush while request 0 holds KV blocks: vLLM resets the prefix cache "
      "only when no request holds KV, or after preempting every running request "
      "(SchedulerInterface.reset_prefix_cache, vllm/v1/core/sched/interface.py; BlockPool.reset_prefix_cache, "
      "vllm/v1/core/block_pool.py @ 002f349)";
  EXPECT_EQ(profile_error(t, main_profile()), flush + " under profile vllm");
  EXPECT_EQ(profile_error(t, legacy_profile()), flush + " under profile vllm-legacy");
  t.steps[1].events.insert(t.steps[1].events.begin(), on(Kind::preempt, 0));
  t.steps[1].run = {};
  t.steps.push_back({{}, {extend(0, 0, 4)}});
  EXPECT_EQ(profile_error(t, main_profile()), "runs");

  // A request scheduled after its abort.
  t = vllm_trace({request(0, {1, 2, 3}, {4, 5}, Finish::abort)},
                 {{{}, {extend(0, 0, 3)}}, {{on(Kind::abort, 0)}, {decode(0, 3)}}});
  EXPECT_EQ(profile_error(t, main_profile()),
            "steps[1].run[0]: request 0 runs after its abort: vLLM frees an aborted request at once and never "
            "schedules it again (Scheduler.finish_requests, vllm/v1/core/sched/scheduler.py) under profile vllm");

  // More KV than the pool holds: vLLM would have preempted instead.
  t = vllm_trace({request(0, {1, 2, 3, 4, 5}, {6})}, {{{}, {extend(0, 0, 5)}}});
  t.config.kv_slots = 4;
  EXPECT_EQ(profile_error(t, main_profile()),
            "steps[0].run[0]: request 0 needs 3 more KV blocks, DP rank 0 has 2 free (vLLM preempts a request "
            "instead: KVCacheManager.allocate_slots returns None, vllm/v1/core/kv_cache_manager.py @ 003df29) under "
            "profile vllm");

  // A hit on another DP rank's KV: each rank has its own prefix cache.
  t = vllm_trace({request(0, {5, 6, 7}, {1}, Finish::length, 0), request(1, {5, 6, 8}, {2}, Finish::length, 1)},
                 {{{}, {extend(0, 0, 3)}}, {{hit(1, 2)}, {extend(1, 2, 3)}}});
  t.dp = 2;
  EXPECT_EQ(profile_error(t, main_profile()),
            "steps[1].run[0]: request 1 hits 2 positions, but block 0 of its prefix is not in DP rank 1's prefix "
            "cache (vLLM hits only cached full blocks: KVCacheManager.get_computed_blocks, "
            "vllm/v1/core/kv_cache_manager.py @ 003df29) under profile vllm");
}

Trace two_ranks() {
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5}), request(1, {7, 8}, {9, 10}, Finish::length, 1)},
                       {{{}, {extend(0, 0, 3), extend(1, 0, 2)}}, {{}, {decode(0, 3)}}, {{}, {decode(1, 2)}}});
  t.dp = 2;
  t.tp = 2;
  t.config.token_budget = 3;
  t.config.cuda_graph_decode = {1, 2, 4};
  return t;
}

TEST(VllmLifecycle, StepCaseIsTheStepsRowsPerRankPaddedTheWayVllmPads) {
  const Trace t = two_ranks();
  const Timeline timeline = timeline_of(t);
  // A prefill step: eager, every rank padded to the widest (dp_max), the gathered batch.
  std::optional<Case> c = model().step_case(t, timeline, 0);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->engine, vllm::engine());
  EXPECT_EQ(c->topology, (Topology{2, 2, false, false}));
  EXPECT_EQ(c->model, t.model);
  EXPECT_EQ(c->max_num_tokens, 3);
  EXPECT_EQ(c->tokens, (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(c->idle_dummy);
  EXPECT_EQ(c->padding, (Padding{PaddingMode::dp_max, {}}));
  EXPECT_EQ(c->path, Path::gathered);
  // A decode step with an idle rank: its dummy token, and the decode graph sizes clamped to M.
  c = model().step_case(t, timeline, 1);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->tokens, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(c->padding, (Padding{PaddingMode::cudagraph, {1, 2, 3}}));
  for (int step = 0; step < 3; ++step) {
    const std::optional<Case> each = model().step_case(t, timeline, step);
    ASSERT_TRUE(each.has_value());
    EXPECT_TRUE(validate(*each).ok());
    EXPECT_TRUE(check_profile(*each, main_profile()).ok());
  }
  EXPECT_FALSE(model().step_case(t, timeline, 3).has_value());
}

TEST(VllmLifecycle, StepCaseOfOneRankAndOfAnIdleStep) {
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5, 6})},
                       {{{}, {extend(0, 0, 3)}}, {{on(Kind::preempt, 0)}, {}}, {{hit(0, 2)}, {extend(0, 2, 3)}},
                        {{}, {decode(0, 3)}}});
  t.config.cuda_graph_decode = {2};
  const Timeline timeline = timeline_of(t);
  std::optional<Case> c = model().step_case(t, timeline, 0);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->tokens, (std::vector<int64_t>{3}));
  EXPECT_FALSE(c->idle_dummy);
  EXPECT_EQ(c->padding, (Padding{PaddingMode::none, {}}));
  EXPECT_EQ(c->path, Path::single);
  // No rank forwards anything: vLLM runs no step.
  EXPECT_FALSE(model().step_case(t, timeline, 1).has_value());
  c = model().step_case(t, timeline, 3);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->padding, (Padding{PaddingMode::cudagraph, {2}}));
}

}  // namespace
}  // namespace r3
