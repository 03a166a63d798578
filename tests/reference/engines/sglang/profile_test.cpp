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

Profile upstream_profile() { return Profile::of(sglang::engine(), 0); }  // sglang
Profile miles_profile() { return Profile::of(sglang::engine(), 1); }     // sglang-miles

std::string outside(const Case& c, Profile p) {
  const Status s = sglang::check_profile(c, p);
  return s.ok() ? "" : s.error().message;
}

Case with_prefill_graph(Case c) {
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{}, {8}};
  return c;
}

const std::string kUpstreamBcg =
    "cuda_graph.prefill: this version disables the breakable prefill graph here (upstream: with TBO, or an a2a "
    "backend outside none, deepep, megamoe, flashinfer; server_args.py, _disable_breakable_cudagraph_if_incompatible)";
const std::string kMilesBcg =
    "cuda_graph.prefill: this version disables the breakable prefill graph here (sglang-miles: with TBO, DP "
    "attention or any a2a backend; server_args.py, _disable_breakable_cudagraph_if_incompatible)";

TEST(SglangProfile, BothVersionsRunTheIssueExample) {
  for (Profile p : {upstream_profile(), miles_profile()}) EXPECT_EQ(outside(test::sglang_issue_example(), p), "");
  EXPECT_EQ(profile_of(test::sglang_issue_example()), upstream_profile());
}

TEST(SglangProfile, AnAllIdleForwardNeverRuns) {
  EXPECT_EQ(outside(test::sglang_extend(2, 1, {0, 0}), upstream_profile()),
            "tokens: every DP rank is idle; the scheduler runs no forward then (idle ranks run only beside a busy "
            "one: managers/scheduler.py, prepare_mlp_sync_batch) under profile sglang");
  EXPECT_EQ(outside(test::sglang_decode(2, 1, {0, 0}), miles_profile()),
            "requests: every DP rank is idle; the scheduler runs no forward then (idle ranks run only beside a busy "
            "one: managers/scheduler.py, prepare_mlp_sync_batch) under profile sglang-miles");
  EXPECT_EQ(outside(test::sglang_decode(2, 1, {0, 1}), upstream_profile()), "");
}

TEST(SglangProfile, TboWithA2aNoneNeedsDpAttention) {
  Case c = test::sglang_extend(1, 2, {4});
  sglang::forward_of(c)->tbo = true;
  EXPECT_FALSE(tbo_allowed(c));
  for (Profile p : {upstream_profile(), miles_profile()}) {
    EXPECT_EQ(outside(c, p), "tbo: two-batch overlap with a2a none needs DP attention (server_args.py, "
                             "_check_two_batch_overlap) under profile " + std::string(to_string(p)));
  }
  Case dp = test::sglang_extend(2, 1, {4, 2});
  sglang::forward_of(dp)->tbo = true;
  EXPECT_TRUE(tbo_allowed(dp));
  EXPECT_EQ(outside(dp, upstream_profile()), "");
  sglang::forward_of(c)->a2a = A2a::deepep;
  EXPECT_TRUE(tbo_allowed(c));
  EXPECT_EQ(outside(c, miles_profile()), "");
}

TEST(SglangProfile, BreakableGraphRulesOfUpstream) {
  // Allowed with DP attention (PR #31682), with none, deepep, megamoe and flashinfer.
  EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(2, 2, {3, 1})), upstream_profile()), "");
  for (A2a a : {A2a::none, A2a::deepep, A2a::megamoe, A2a::flashinfer})
    EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(1, 2, {3}, a)), upstream_profile()), "") << to_string(a);
  for (A2a a : {A2a::mooncake, A2a::nixl, A2a::mori, A2a::pplx, A2a::ascend_fuseep})
    EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(1, 2, {3}, a)), upstream_profile()),
              kUpstreamBcg + " under profile sglang")
        << to_string(a);
  Case tbo = with_prefill_graph(test::sglang_extend(2, 1, {3, 1}));
  sglang::forward_of(tbo)->tbo = true;
  EXPECT_EQ(outside(tbo, upstream_profile()), kUpstreamBcg + " under profile sglang");
}

TEST(SglangProfile, BreakableGraphRulesOfMiles) {
  // Only without DP attention, a2a none and TBO.
  EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(1, 2, {3})), miles_profile()), "");
  EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(2, 2, {3, 1})), miles_profile()),
            kMilesBcg + " under profile sglang-miles");
  for (A2a a : {A2a::deepep, A2a::megamoe, A2a::flashinfer, A2a::nixl})
    EXPECT_EQ(outside(with_prefill_graph(test::sglang_extend(1, 2, {3}, a)), miles_profile()),
              kMilesBcg + " under profile sglang-miles")
        << to_string(a);
  EXPECT_TRUE(prefill_graph_allowed(test::sglang_extend(2, 2, {3, 1}), upstream_profile()));
  EXPECT_FALSE(prefill_graph_allowed(test::sglang_extend(2, 2, {3, 1}), miles_profile()));
}

TEST(SglangProfile, AProfileBelongsToOneEngine) {
  EXPECT_EQ(engine_of(upstream_profile()), sglang::engine());
  EXPECT_EQ(engine_of(miles_profile()), sglang::engine());
  EXPECT_TRUE(covers(Profile::any(), sglang::engine()));
  EXPECT_FALSE(covers(kDefaultProfile, sglang::engine()));
  EXPECT_EQ(r3::check_profile(test::sglang_issue_example(), kDefaultProfile).error().message,
            "engine: a sglang case lies outside profile vllm, which is vllm's");
  EXPECT_TRUE(r3::check_profile(test::sglang_extend(2, 1, {0, 0}), Profile::any()).ok());
  // A case only upstream runs is that profile's; one neither runs is any's.
  EXPECT_EQ(profile_of(with_prefill_graph(test::sglang_extend(2, 2, {3, 1}))), upstream_profile());
  EXPECT_EQ(profile_of(test::sglang_extend(2, 1, {0, 0})), Profile::any());
}

TEST(SglangProfile, FitToProfileMakesTheSmallestEdits) {
  // TBO dropped where it cannot run.
  Case tbo = test::sglang_extend(1, 2, {4});
  sglang::forward_of(tbo)->tbo = true;
  EXPECT_FALSE(sglang::forward_of(sglang::fit_to_profile(tbo, upstream_profile()))->tbo);
  // Prefill buckets dropped where the version disables BCG; the decode buckets stay.
  Case graphs = test::sglang_extend(2, 2, {3, 1});
  sglang::forward_of(graphs)->cuda_graph = CudaGraphs{{2}, {8}};
  sglang::forward_of(graphs)->last_decode_bucket = 2;
  const Case miles = sglang::fit_to_profile(graphs, miles_profile());
  EXPECT_EQ(sglang::forward_of(miles)->cuda_graph, (CudaGraphs{{2}, {}}));
  EXPECT_EQ(sglang::forward_of(miles)->last_decode_bucket, 2);
  EXPECT_EQ(sglang::fit_to_profile(graphs, upstream_profile()), graphs);
  // Without decode buckets the graph goes, and with it the last bucket.
  const Case bare = sglang::fit_to_profile(with_prefill_graph(test::sglang_extend(2, 2, {3, 1})), miles_profile());
  EXPECT_FALSE(sglang::forward_of(bare)->cuda_graph.has_value());
  EXPECT_FALSE(sglang::forward_of(bare)->last_decode_bucket.has_value());
  // An all-idle forward gets one token (or request) on rank 0.
  EXPECT_EQ(sglang::fit_to_profile(test::sglang_extend(2, 1, {0, 0}), upstream_profile()).tokens, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(sglang::forward_of(sglang::fit_to_profile(test::sglang_decode(2, 1, {0, 0}), upstream_profile()))->requests,
            (std::vector<int64_t>{1, 0}));
  // Each fitted case is valid and inside the profile; any and the other engine's profiles change nothing.
  for (const Case& c : {tbo, graphs, test::sglang_extend(2, 1, {0, 0})}) {
    for (Profile p : {upstream_profile(), miles_profile()}) {
      const Case fitted = r3::fit_to_profile(c, p);
      EXPECT_TRUE(r3::validate(fitted).ok());
      EXPECT_EQ(outside(fitted, p), "");
    }
    EXPECT_EQ(r3::fit_to_profile(c, Profile::any()), c);
    EXPECT_EQ(r3::fit_to_profile(c, kDefaultProfile), c);
  }
}

}  // namespace
}  // namespace r3::sglang
