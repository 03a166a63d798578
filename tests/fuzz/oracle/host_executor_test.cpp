#include "fuzz/oracle/host_executor.hpp"

#include <gtest/gtest.h>

#include "fuzz/oracle/judge.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "reference/provenance.hpp"
#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

using test::make_case;

int32_t body_value(const GuardedImage& img, int64_t row, int64_t col) {
  return img.data[static_cast<size_t>((img.guard_rows + row) * img.row_width + col)];
}

TEST(HostExecutor, FillsTheLayerWithTokensAndLeavesEverythingElseUntouched) {
  const Case c = make_case(test::kDp2, 4, {3, 2}, Path::local);  // 4 layers, top-2, layer 1
  const Step step = derive_step(c).value();
  const ConcreteOutcome out = execute_on_host(c, step, *make_vllm_50874_policy());
  ASSERT_EQ(out.ranks.size(), 2u);
  const GuardedImage& img = out.ranks[1].capture;
  EXPECT_EQ(img.rows, 4);
  EXPECT_EQ(img.row_width, 8);
  EXPECT_EQ(img.guard_rows, kMinGuardRows);
  EXPECT_EQ(img.data[0], kCanary);
  EXPECT_EQ(img.data.back(), kCanary);
  EXPECT_EQ(body_value(img, 1, 2 + 1), routing_value({RowKind::token, 1, 1}, 1));  // row 1, layer 1, k 1
  EXPECT_EQ(body_value(img, 2, 2), untouched_value(2, 1, 0));                       // beyond n_1 = 2
  EXPECT_EQ(body_value(img, 0, 0), untouched_value(0, 0, 0));                       // another layer
  EXPECT_EQ(out.ranks[1].calls.front().branch, branch::local);
  EXPECT_FALSE(out.ranks[1].replay.has_value());
}

TEST(HostExecutor, MonolithicKernelOverrunsAPerRankReplayBufferIntoItsGuard) {
  // vllm-pre-50874 sizes the replay buffer M = 4 rows; the gathered batch has 4 + 3 = 7 rows.
  const Case c = make_case(test::kDp2, 4, {4, 3}, Path::gathered, true);
  const Step step = derive_step(c).value();
  const ConcreteOutcome out = execute_on_host(c, step, *make_vllm_pre_50874_policy());
  const GuardedImage& replay = *out.ranks[0].replay;
  EXPECT_EQ(replay.rows, 4);
  EXPECT_EQ(replay.bits, 16);
  EXPECT_EQ(replay.guard_rows, 3);  // sized to hold the 3 rows past the end
  const int32_t token_1_0 = replay_value(routing_value({RowKind::token, 1, 0}, 0), 64);
  EXPECT_EQ(body_value(replay, 4, 0), token_1_0);  // gathered row 4 = token (1, 0), first guard row
  EXPECT_EQ(replay.data.front(), stored_value(kCanary, 16));  // nothing before the start
  EXPECT_EQ(replay.data.back(), replay_value(routing_value({RowKind::token, 1, 2}, 1), 64));  // last row, k 1
}

// A policy that copies its rows far past any guard region (as a buggy adapter might).
class FarWriter final : public CapturePolicy {
 public:
  std::string_view name() const override { return "far-writer"; }
  Allocation allocate(const Case& c) const override { return {c.max_num_tokens, std::nullopt, 16}; }
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    out.branch = branch::local;
    out.copies.push_back({1'000'000, 0, call.rows, false});
  }
};

TEST(HostExecutor, WritesBeyondTheGuardLandOnItsOutermostRowAndCount) {
  const Case c = make_case(test::kDp2, 4, {3, 2}, Path::local);
  const Step step = derive_step(c).value();
  HostRunStats stats;
  const ConcreteOutcome out = execute_on_host(c, step, FarWriter{}, &stats);
  const GuardedImage& img = out.ranks[0].capture;
  EXPECT_EQ(img.guard_rows, kMaxGuardRows);
  const int64_t last_guard_row = img.rows + img.guard_rows - 1;
  EXPECT_EQ(body_value(img, last_guard_row, 2), routing_value({RowKind::token, 0, 2}, 0));  // the last write wins
  EXPECT_EQ(stats.rows_folded, 3 + 2);  // every row of both DP ranks (TP 1)
  EXPECT_EQ(judge_concrete(c, step, out, "far-writer").verdict, Verdict::overflow);
}

TEST(HostExecutor, StoredValueTruncatesAndSignExtends) {
  EXPECT_EQ(stored_value(40000, 16), 40000 - 65536);
  EXPECT_EQ(stored_value(32767, 16), 32767);
  EXPECT_EQ(stored_value(kCanary, 32), kCanary);
  EXPECT_EQ(stored_value(-1, 16), -1);
}

}  // namespace
}  // namespace r3
