// Which valid SGLang cases each version runs (reference/engines/sglang/profile.cpp;
// docs/layout-contract.md section 11.7), each rule's text, and fit_to_profile's edits.
#include "reference/engines/sglang/profile.hpp"

#include <gtest/gtest.h>

#include <string>

#include "reference/profile.hpp"
#include "reference/validate.hpp"
#include "tests/support/sglang_fixtures.hpp"

namespace r3::sglang {
namespace {

std::string outside(const Case& c, Profile p) {
  const Status s = sglang::check_profile(c, p);
  return s.ok() ? "" : s.error().message;
}

Case with_prefill_graph(Case c) {
  c.sglang->cuda_graph = CudaGraphs{{}, {8}};
  return c;
}

const std::string kUpstreamBcg =
    "cuda_graph.prefill: this version disables the breakable prefill graph here (upstream: with TBO, or an a2a "
    "backend outside none, deepep, megamoe, flashinfer; server_args.py, _disable_breakable_cudagraph_if_incompatible)";
const std::string kMilesBcg =
    "cuda_graph.prefill: this version disables the breakable prefill graph here (sglang-miles: with TBO, DP "
    "attention or any a2a backend; server_args.py, _disable_breakable_cudagraph_if_incompatible)";

TEST(SglangProfile, BothVersionsRunTheIssueExample) {
  for (Profile p : {Profile::sglang, Profile::sglang_miles}) EXPECT_EQ(outside(test::sglang_issue_example(), p), "");
  EXPECT_EQ(profile_of(test::sglang_issue_example()), Profile::sglang);
}

TEST(SglangProfile, AnAllIdleForwardNeverRuns) {
  EXPECT_EQ(outside(test::sglang_extend(2, 1, {0, 0}), Profile::sglang),
            "tokens: every DP rank is idle; the scheduler runs no forward then (idle ranks run only beside a busy "
            "one: managers/scheduler.py, prepare_mlp_sync_batch) under profile sglang");
  EXPECT_EQ(outside(test::sglang_decode(2, 1, {0, 0}), Profile::sglang_miles),
            "requests: every DP rank is idle; the scheduler runs no forward then (idle ranks run only beside a busy "
            "one: managers/scheduler.py, prepare_mlp_sync_batch) under profile sglang-miles");
  EXPECT_EQ(outside(test::sglang_decode(2, 1, {0, 1}), Profile::sglang), "");
}

TEST(SglangProfile, TboWithA2aNoneNeedsDpAttention) {
  Case c = test::sglang_extend(1, 2, {4});
  c.sglang->tbo = true;
  EXPECT_FALSE(tbo_allowed(c));
  for (Profile p : {Profile::sglang, Profile::sglang_miles}) {
    EXPECT_EQ(outside(c, p), "tbo: two-batch overlap with a2a none needs DP attention (server_args.py, "
                             "_check_two_batch_overlap) under profile " + std::string(to_string(p)));
  }
  Case dp = test::sglang_extend(2, 1, {4, 2});
  dp.sglang->tbo = true;
  EXPECT_TRUE(tbo_allowed(dp));
  EXPECT_EQ(outside(dp, Profile::sglang), "");
  c.sglang->a2a = A2a::deepep;
  EXPECT_TRUE(tbo_allowed(c));
  EXPECT_EQ(outside(c, Profile::sglang_miles), "");
}

TEST(SglangProfile, BreakableGraphRulesOfUpstream) {
  // Allowed with DP attention (PR #31682), with none, deepep, megamoe and flashinfer.
  EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(2, 2, {3, 1})), Profile::sglang), "");
  for (A2a a : {A2a::none, A2a::deepep, A2a::megamoe, A2a::flashinfer})
    EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(1, 2, {3}, a)), Profile::sglang), "") << to_string(a);
  for (A2a a : {A2a::mooncake, A2a::nixl, A2a::mori, A2a::pplx, A2a::ascend_fuseep})
    EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(1, 2, {3}, a)), Profile::sglang),
              kUpstreamBcg + " under profile sglang")
        << to_string(a);
  Case tbo = with_prefill_graph(test::sglang_extend(2, 1, {3, 1}));
  tbo.sglang->tbo = true;
  EXPECT_EQ(outside(tbo, Profile::sglang), kUpstreamBcg + " under profile sglang");
}

TEST(SglangProfile, BreakableGraphRulesOfMiles) {
  // Only without DP attention, a2a none and TBO.
  EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(1, 2, {3})), Profile::sglang_miles), "");
  EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(2, 2, {3, 1})), Profile::sglang_miles),
            kMilesBcg + " under profile sglang-miles");
  for (A2a a : {A2a::deepep, A2a::megamoe, A2a::flashinfer, A2a::nixl})
    EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(1, 2, {3}, a)), Profile::sglang_miles),
              kMilesBcg + " under profile sglang-miles")
        << to_string(a);
  EXPECT_TRUE(prefill_graph_allowed(test::sglang_extend(2, 2, {3, 1}), Profile::sglang));
  EXPECT_FALSE(prefill_graph_allowed(test::sglang_extend(2, 2, {3, 1}), Profile::sglang_miles));
}

TEST(SglangProfile, AProfileBelongsToOneEngine) {
  EXPECT_EQ(engine_of(Profile::sglang), Engine::sglang);
  EXPECT_EQ(engine_of(Profile::sglang_miles), Engine::sglang);
  EXPECT_TRUE(covers(Profile::any, Engine::sglang));
  EXPECT_FALSE(covers(Profile::vllm, Engine::sglang));
  EXPECT_EQ(r3::check_profile(test::sglang_issue_example(), Profile::vllm).error().message,
            "engine: a sglang case lies outside profile vllm, which is vllm's");
  EXPECT_TRUE(r3::check_profile(test::sglang_extend(2, 1, {0, 0}), Profile::any).ok());
  // A case only upstream runs is that profile's; one neither runs is any's.
  EXPECT_EQ(profile_of(with_prefill_graph(test::sglang_extend(2, 2, {3, 1}))), Profile::sglang);
  EXPECT_EQ(profile_of(test::sglang_extend(2, 1, {0, 0})), Profile::any);
}

TEST(SglangProfile, FitToProfileMakesTheSmallestEdits) {
  // TBO dropped where it cannot run.
  Case tbo = test::sglang_extend(1, 2, {4});
  tbo.sglang->tbo = true;
  EXPECT_FALSE(sglang::fit_to_profile(tbo, Profile::sglang).sglang->tbo);
  // Prefill buckets dropped where the version disables BCG; the decode buckets stay.
  Case graphs = test::sglang_extend(2, 2, {3, 1});
  graphs.sglang->cuda_graph = CudaGraphs{{2}, {8}};
  graphs.sglang->last_decode_bucket = 2;
  const Case miles = sglang::fit_to_profile(graphs, Profile::sglang_miles);
  EXPECT_EQ(miles.sglang->cuda_graph, (CudaGraphs{{2}, {}}));
  EXPECT_EQ(miles.sglang->last_decode_bucket, 2);
  EXPECT_EQ(sglang::fit_to_profile(graphs, Profile::sglang), graphs);
  // Without decode buckets the graph goes, and with it the last bucket.
  const Case bare = sglang::fit_to_profile(with_prefill_graph(test::sglang_extend(2, 2, {3, 1})), Profile::sglang_miles);
  EXPECT_FALSE(bare.sglang->cuda_graph.has_value());
  EXPECT_FALSE(bare.sglang->last_decode_bucket.has_value());
  // An all-idle forward gets one token (or request) on rank 0.
  EXPECT_EQ(sglang::fit_to_profile(test::sglang_extend(2, 1, {0, 0}), Profile::sglang).tokens, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(sglang::fit_to_profile(test::sglang_decode(2, 1, {0, 0}), Profile::sglang).sglang->requests,
            (std::vector<int64_t>{1, 0}));
  // Each fitted case is valid and inside the profile; any and the other engine's profiles change nothing.
  for (const Case& c : {tbo, graphs, test::sglang_extend(2, 1, {0, 0})}) {
    for (Profile p : {Profile::sglang, Profile::sglang_miles}) {
      const Case fitted = r3::fit_to_profile(c, p);
      EXPECT_TRUE(r3::validate(fitted).ok());
      EXPECT_EQ(outside(fitted, p), "");
    }
    EXPECT_EQ(r3::fit_to_profile(c, Profile::any), c);
    EXPECT_EQ(r3::fit_to_profile(c, Profile::vllm), c);
  }
}

}  // namespace
}  // namespace r3::sglang
