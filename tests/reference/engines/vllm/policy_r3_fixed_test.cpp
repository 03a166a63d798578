#include <gtest/gtest.h>

#include "reference/capturer.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "reference/policy.hpp"
#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

using test::make_case;
using V = std::vector<int64_t>;

class R3FixedTest : public ::testing::Test {
 protected:
  std::unique_ptr<CapturePolicy> policy = make_r3_fixed_policy();

  // The policy's decision for view `rank` of call `call` of the case's step.
  CaptureDecision decide(const Case& c, size_t call, size_t rank) {
    step = std::move(derive_step(c)).value();
    const Call& k = step.calls[call];
    CaptureDecision out;
    policy->decide(capture_call_for(step, k, k.view(static_cast<size_t>(rank)), {policy->allocate(c).capture_rows, c.model.layers, c.model.top_k}),
                   out);
    return out;
  }
  Step step;
};

TEST_F(R3FixedTest, RejectsDpMetadataOnASingleRankStep) {
  Case c = make_case({1, 1, false, false}, 3, {3}, Path::single);
  c.metadata = MetadataOverride{std::nullopt, true, V{3}};
  const CaptureDecision d = decide(c, 0, 0);
  EXPECT_TRUE(d.rejected);
  EXPECT_EQ(d.error, "DP metadata on a step with dp_size 1 (a single DP rank has none)");
}

TEST_F(R3FixedTest, AllocatesForTheLargestStep) {
  Case c = make_case(test::kDp2Tp2EpSp, 7, {3, 2}, Path::gathered, true);
  Allocation a = policy->allocate(c);
  EXPECT_EQ(a.capture_rows, 7);
  EXPECT_EQ(a.replay_rows, 16);  // D * T * ceil(M / T)
  EXPECT_EQ(a.replay_bits, 16);
  c.padding = {PaddingMode::cudagraph, {4, 16}};
  a = policy->allocate(c);
  EXPECT_EQ(a.capture_rows, 16);
  EXPECT_EQ(a.replay_rows, 32);
  c.model.experts = 40000;
  c.model.top_k = 8;
  EXPECT_EQ(policy->allocate(c).replay_bits, 32);
  c.monolithic = false;
  EXPECT_EQ(policy->allocate(c).replay_rows, std::nullopt);
  EXPECT_EQ(policy->name(), "r3-fixed");
}

TEST_F(R3FixedTest, GatheredTakesTheRanksShards) {
  const CaptureDecision d = decide(make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered), 0, 2);
  EXPECT_EQ(d.branch, branch::gathered_shards);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 4, 2, false}}));
}

TEST_F(R3FixedTest, OneRowShardIsGatheredAcrossTp) {  // the corner case 2 (docs/layout-contract.md section 8) fix
  const CaptureDecision d = decide(make_case(test::kDp2Tp2EpSp, 8, {1, 4}, Path::sp_shard), 0, 1);
  EXPECT_EQ(d.branch, branch::sp_allgather);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 0, 1, true}}));
}

TEST_F(R3FixedTest, MicrobatchesWriteAtTheirOffset) {
  Case c = make_case(test::kDp2, 16, {10, 7}, Path::local);
  c.padding.mode = PaddingMode::dp_max;
  c.microbatches = 2;
  const CaptureDecision d = decide(c, 1, 1);
  EXPECT_EQ(d.branch, branch::local);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{5, 0, 5, false}}));
}

TEST_F(R3FixedTest, SpChunkCopiesEachTpRanksPiece) {  // n = [5, 3], T = 2, C = 2, chunk 0 of dp 0
  Case c = make_case(test::kDp2Tp2EpSp, 8, {5, 3}, Path::sp_shard);
  c.dp_chunk = 2;
  const CaptureDecision d = decide(c, 0, 0);
  EXPECT_EQ(d.branch, branch::sp_allgather);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 0, 2, true}, {3, 2, 2, true}}));
  const CaptureDecision last = decide(c, 1, 0);  // chunk 1: padded rows 2 and 5; only row 2 is a token
  EXPECT_EQ(last.copies, (std::vector<Copy>{{2, 0, 1, true}}));
  const CaptureDecision done = decide(c, 1, 2);  // dp 1 finished: its rerun row is skipped
  EXPECT_EQ(done.branch, branch::skip);
  EXPECT_TRUE(done.copies.empty());
}

TEST_F(R3FixedTest, RejectsMetadataThatDisagrees) {
  Case c = make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered);
  c.metadata = MetadataOverride{{}, true, V{2, 2, 1, 2}};
  EXPECT_EQ(decide(c, 0, 0).error, "local_sizes[3] = 2 disagrees with num_tokens_across_dp[1] = 2 (expected 1)");
  c.metadata = MetadataOverride{{}, true, std::nullopt};
  EXPECT_EQ(decide(c, 0, 0).error, "local_sizes unset on a step with DP metadata");
  c.metadata = MetadataOverride{{}, true, V{2, 2, 1}};
  EXPECT_EQ(decide(c, 0, 0).error, "local_sizes has 3 entries, expected dp_size 2 or dp_size*tp_size 4");
  c.metadata = MetadataOverride{V{3, 2, 0}, false, {}};
  EXPECT_EQ(decide(c, 0, 0).error, "num_tokens_across_dp has 3 entries for dp_size 2");
  Case single = make_case(test::kSingle, 8, {3}, Path::single);
  single.metadata = MetadataOverride{V{3}, false, {}};
  EXPECT_EQ(decide(single, 0, 0).error, "DP metadata on a step with dp_size 1 (a single DP rank has none)");
}

}  // namespace
}  // namespace r3
