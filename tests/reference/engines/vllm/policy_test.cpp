#include <gtest/gtest.h>

#include "reference/engines/vllm/policy.hpp"
#include "reference/policy.hpp"
#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

using V = std::vector<int64_t>;


// What capture() sees: n rows, the DP metadata (local_sizes optional), dp_rank, tp_size.
CaptureDecision decide(const CapturePolicy& policy, int64_t n, V across, std::optional<V> local_sizes, int dp_rank,
                       int tp_size, int tp_rank = 0, bool wants_words = true) {
  const DpMetadata metadata{std::move(across), std::move(local_sizes)};
  CaptureCall call;
  call.dp_rank = dp_rank;
  call.tp_rank = tp_rank;
  call.dp_size = static_cast<int>(metadata.num_tokens_across_dp.size());
  call.tp_size = tp_size;
  call.rows = n;
  call.metadata = &metadata;
  call.layer = 1;
  call.capture_buffer = {8, 4, 2};
  CaptureDecision out;
  out.wants_words = wants_words;
  policy.decide(call, out);
  return out;
}

class Vllm50874Test : public ::testing::Test {
 protected:
  std::unique_ptr<CapturePolicy> policy = make_vllm_50874_policy();
};

// vLLM's own upstream test vectors (tests of PR #50874), as facts.
TEST_F(Vllm50874Test, UpstreamNaiveGathered) {  // DP [2, 3], rank 1, naive gathered: rows [2, 5)
  const CaptureDecision d = decide(*policy, 5, {2, 3}, std::nullopt, 1, 1);
  EXPECT_EQ(d.branch, branch::naive_total);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 2, 3, false}}));
}

TEST_F(Vllm50874Test, UpstreamGatheredShards) {  // [3, 2], local_sizes [2, 2, 1, 1], T = 2, rank 1, 6 rows: [4, 6)
  const CaptureDecision d = decide(*policy, 6, {3, 2}, V{2, 2, 1, 1}, 1, 2);
  EXPECT_EQ(d.branch, branch::gathered_shards);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 4, 2, false}}));
}

TEST_F(Vllm50874Test, UpstreamSpShard) {  // [2, 3], T = 2, rank 1, a 2-row shard: TP all-gather, rows [0, 3)
  for (const auto& sizes : {std::optional<V>{}, std::optional<V>{V{1, 1, 2, 2}}}) {
    const CaptureDecision d = decide(*policy, 2, {2, 3}, sizes, 1, 2);
    EXPECT_EQ(d.branch, branch::sp_allgather);
    EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 0, 3, true}}));
  }
}

TEST_F(Vllm50874Test, UpstreamOneRowRaises) {  // 1 row with [2, 3]: raises
  const CaptureDecision d = decide(*policy, 1, {2, 3}, std::nullopt, 1, 2);
  EXPECT_TRUE(d.rejected);
  EXPECT_EQ(d.branch, branch::error);
  EXPECT_TRUE(d.copies.empty());
  EXPECT_EQ(d.error, "routed experts have 1 rows; expected 5 (all DP ranks), 3 (this DP rank) or 2 (one SP shard)");
  const CaptureDecision tp1 = decide(*policy, 1, {2, 3}, V{2, 3}, 0, 1);
  EXPECT_EQ(tp1.error, "routed experts have 1 rows; expected 5 (all DP ranks), 2 (this DP rank), 5 (sum of local_sizes)");
}

// The symbolic judge decides every class lead without words and words the reported rank only.
TEST_F(Vllm50874Test, RejectsWithoutWordsWhenNoneAreWanted) {
  for (const auto& p : {make_vllm_50874_policy(), make_vllm_pre_50874_policy()}) {
    CaptureDecision d = decide(*p, 1, {2, 3}, std::nullopt, 1, 2, 0, false);
    EXPECT_TRUE(d.rejected) << p->name();
    EXPECT_EQ(d.branch, branch::error);
    EXPECT_EQ(d.error, "");
    d.clear();
    EXPECT_FALSE(d.wants_words);  // the caller's choice outlives clear()
    EXPECT_NE(decide(*p, 1, {2, 3}, std::nullopt, 1, 2, 0, true).error, "") << p->name();
  }
  CaptureDecision given;
  given.wants_words = false;
  given.reject(std::string("a message built by the caller"));
  EXPECT_TRUE(given.rejected);
  EXPECT_EQ(given.error, "");
}

TEST_F(Vllm50874Test, LocalBranch) {
  const CaptureDecision d = decide(*policy, 3, {2, 3}, V{2, 3}, 1, 1);
  EXPECT_EQ(d.branch, branch::local);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 0, 3, false}}));
}

// corner case 2 (docs/layout-contract.md section 8): a one-row shard equals n_d = 1 and takes branch 3 without the TP gather.
TEST_F(Vllm50874Test, OneRowShardTakesTheLocalBranch) {
  const CaptureDecision d = decide(*policy, 1, {1, 4}, V{1, 1, 2, 2}, 0, 2, 1);
  EXPECT_EQ(d.branch, branch::local);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 0, 1, false}}));
}

TEST_F(Vllm50874Test, LocalSizesNotAMultipleOfDpRaises) {
  const CaptureDecision d = decide(*policy, 7, {3, 2}, V{2, 2, 3}, 1, 2);
  EXPECT_TRUE(d.rejected);
  EXPECT_EQ(d.error, "len(local_sizes) = 3 is not a multiple of dp_size 2");
}

TEST_F(Vllm50874Test, NoMetadataCopiesEverything) {
  CaptureCall call;
  call.rows = 5;
  call.layer = 0;
  call.capture_buffer = {8, 1, 1};
  CaptureDecision d;
  policy->decide(call, d);
  EXPECT_EQ(d.branch, branch::single);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 0, 5, false}}));
}

TEST_F(Vllm50874Test, BufferChecks) {
  CaptureCall call;
  call.rows = 9;
  call.layer = 0;
  call.capture_buffer = {8, 1, 1};
  CaptureDecision d;
  policy->decide(call, d);
  EXPECT_EQ(d.error, "capture buffer holds 8 rows, 9 to write");
  call.rows = 2;
  call.layer = 1;
  d.clear();
  policy->decide(call, d);
  EXPECT_EQ(d.error, "layer 1 out of range for a capture buffer of 1 layers");
}

TEST_F(Vllm50874Test, DpRankWithoutAnEntryRaises) {
  const CaptureDecision d = decide(*policy, 5, {5}, std::nullopt, 1, 1);
  EXPECT_EQ(d.error, "num_tokens_across_dp has 1 entries, no entry for dp_rank 1");
}

TEST_F(Vllm50874Test, AllocatesDispatchGroupReplayRows) {
  Case c = test::make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered, true);
  EXPECT_EQ(policy->allocate(c).capture_rows, 8);
  EXPECT_EQ(policy->allocate(c).replay_rows, 32);  // M * D * T with EP
  c.topology = {2, 2, false, false};
  EXPECT_EQ(policy->allocate(c).replay_rows, 16);  // M * D without EP
  EXPECT_EQ(dispatch_group_replay_rows(c), 16);
  c.monolithic = false;
  EXPECT_EQ(policy->allocate(c).replay_rows, std::nullopt);
  EXPECT_EQ(policy->name(), "vllm-50874");
}

class VllmPre50874Test : public ::testing::Test {
 protected:
  std::unique_ptr<CapturePolicy> policy = make_vllm_pre_50874_policy();
};

TEST_F(VllmPre50874Test, OnlyTheNaiveGatheredLayout) {
  const CaptureDecision naive = decide(*policy, 5, {2, 3}, std::nullopt, 1, 1);
  EXPECT_EQ(naive.branch, branch::naive_total);
  EXPECT_EQ(naive.copies, (std::vector<Copy>{{0, 2, 3, false}}));
  const CaptureDecision shards = decide(*policy, 6, {3, 2}, V{2, 2, 1, 1}, 1, 2);
  EXPECT_TRUE(shards.rejected);
  EXPECT_EQ(shards.error, "assert total == n failed: routed experts have 6 rows, num_tokens_across_dp sums to 5");
  EXPECT_TRUE(decide(*policy, 3, {2, 3}, V{2, 3}, 1, 1).rejected);  // no local branch either
}

TEST_F(VllmPre50874Test, ReplayBufferIsSizedPerRank) {
  const Case c = test::vllm_50874_deployment();
  EXPECT_EQ(policy->allocate(c).replay_rows, 8192);
  EXPECT_EQ(policy->allocate(c).capture_rows, 8192);
  EXPECT_EQ(policy->name(), "vllm-pre-50874");
}

}  // namespace
}  // namespace r3
