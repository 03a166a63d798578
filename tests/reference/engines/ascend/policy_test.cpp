// vllm-ascend's capture models (reference/engines/ascend/policy.cpp; spec section 3 and 4): each
// branch with its exact copies, the overlaps, the silent layer guard, the collective check, and
// the verdicts: TP rank 0 judged as failures, the other TP ranks latent.
#include "reference/engines/ascend/policy.hpp"

#include <gtest/gtest.h>

#include "fuzz/oracle/judge.hpp"
#include "reference/engines/ascend/layout.hpp"
#include "tests/support/ascend_fixtures.hpp"

namespace r3::ascend {
namespace {

using Copies = std::vector<Copy>;

Step step_of(const Case& c) {
  Result<Step> s = ascend::derive_step(c);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : Step{};
}

CaptureDecision decide(Version v, const Case& c, int dp, int tp) {
  return test::ascend_decision(*make_policy(v), c, step_of(c), dp, tp);
}

Judgement judged(Version v, const Case& c) {
  const auto policy = make_policy(v);
  return judge_symbolic(c, step_of(c), *policy, policy->name());
}

// Issue #15451's deployment: DP 1, TP 2 with EP on A3 (MC2): each TP rank holds ceil(5/2) rows.
Case issue_15451() { return test::ascend_case(1, 2, true, false, {5}); }

TEST(AscendPolicy, B1TakesWhatTheRankHoldsAndLeavesTheRestUnwritten) {
  const CaptureDecision d = decide(Version::main, issue_15451(), 0, 0);
  EXPECT_EQ(d.branch, branch::single);
  EXPECT_EQ(d.copies, (Copies{{0, 0, 3, false}}));
  const Judgement j = judged(Version::main, issue_15451());
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::failure);
}

TEST(AscendPolicy, B2OnEqualCountsGivesB4sRows) {
  const Case c = test::ascend_case(2, 2, false, false, {3, 3});
  const CaptureDecision d = decide(Version::main, c, 1, 0);
  EXPECT_EQ(d.branch, branch::naive_total);
  EXPECT_EQ(d.copies, (Copies{{0, 3, 3, false}}));
  EXPECT_EQ(judged(Version::main, c).verdict, Verdict::pass);
}

TEST(AscendPolicy, B4TakesTheRanksBlockOfThePaddedGather) {
  const Case c = test::ascend_case(2, 2, false, false, {1, 3});
  const CaptureDecision d = decide(Version::main, c, 1, 1);
  EXPECT_EQ(d.branch, kBranchPaddedTotal);
  EXPECT_EQ(d.copies, (Copies{{0, 3, 3, false}}));
  EXPECT_EQ(judged(Version::main, c).verdict, Verdict::pass);
}

TEST(AscendPolicy, B3FiresBeforeB5WhenCeilMaxOverTpIsTheCount) {
  const Case c = test::ascend_case(2, 2, true, false, {2, 4});  // MC2: DP rank 0 holds 2 = tpd
  EXPECT_EQ(decide(Version::main, c, 0, 0).branch, branch::local);
  EXPECT_EQ(decide(Version::main, c, 0, 1).copies, (Copies{{0, 0, 2, false}}));  // padding on TP 1
  const CaptureDecision d = decide(Version::main, c, 1, 1);
  EXPECT_EQ(d.branch, branch::sp_allgather);
  EXPECT_EQ(d.copies, (Copies{{0, 0, 4, true}}));
  const Judgement j = judged(Version::main, c);
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::latent);
}

TEST(AscendPolicy, B5GathersTheAlltoallSplit) {
  Case c = test::ascend_case(2, 2, true, false, {5, 2});
  fields_of(c)->lora = true;
  EXPECT_EQ(decide(Version::main, c, 0, 0).copies, (Copies{{0, 0, 5, true}}));
  EXPECT_EQ(decide(Version::main, c, 0, 1).branch, branch::sp_allgather);  // floor(5/2) = 2 rows
  EXPECT_EQ(judged(Version::main, c).verdict, Verdict::pass);
}

TEST(AscendPolicy, B6RaisesNamingTheExpectedSizes) {
  const Case c = test::ascend_case(2, 1, true, false, {2, 4});  // MC2 on T = 1: every rank holds max
  const CaptureDecision d = decide(Version::main, c, 0, 0);
  EXPECT_TRUE(d.rejected);
  EXPECT_EQ(d.error, "AssertionError: RoutedExpertsCapturer: unexpected topk_ids batch dim 4 (expected 6, 2, 8, or 2 "
                     "for dp_rank=0, tp_size=1)");
  const Judgement j = judged(Version::main, c);
  EXPECT_EQ(j.verdict, Verdict::spurious_reject);
  EXPECT_EQ(j.severity, Severity::failure);
}

TEST(AscendPolicy, LayerGuardReturnsSilently) {
  const Case c = test::ascend_case(1, 1, false, false, {2});
  const Step s = step_of(c);
  const auto policy = make_policy(Version::main);
  CaptureCall call = capture_call_for(s, s.calls.front(), s.calls.front().view(0, 0), {16, 2, 2});
  call.layer = 2;
  CaptureDecision d;
  policy->decide(call, d);
  EXPECT_FALSE(d.rejected);
  EXPECT_EQ(d.branch, kBranchLayerGuard);
  EXPECT_TRUE(d.copies.empty());
  CaptureDecision fixed;
  make_policy(Version::fixed)->decide(call, fixed);
  EXPECT_EQ(fixed.error, "layer 2 out of range for a capture buffer of 2 layers");
}

TEST(AscendPolicy, AlltoallUnderSpSendsIntoAShorterSlot) {
  // MRv2 eager keeps the raw count 3 under SP: both TP ranks send 2 rows, the tensor_split of 3
  // gives TP 1 a slot of 1 row.
  Case c = test::ascend_case(2, 2, true, true, {3, 4}, Chip::a3, Runner::mrv2);
  fields_of(c)->lora = true;
  EXPECT_EQ(decide(Version::main, c, 0, 0).branch, branch::sp_allgather);
  EXPECT_EQ(decide(Version::main, c, 0, 1).error,
            "collective: TP rank 1 sends 2 rows into an all_gather slot of 1 row (tensor_split of 3 rows over 2 TP ranks)");
  const Judgement j = judged(Version::main, c);
  EXPECT_EQ(j.verdict, Verdict::collective_mismatch);
  EXPECT_EQ(j.detail, "dp 0: tp 0 and tp 1 disagree on issuing the TP all-gather (a hang in production)");
  EXPECT_EQ(judged(Version::fixed, c).verdict, Verdict::pass);
}

TEST(AscendPolicy, V026NeverCaptures) {
  const Judgement j = judged(Version::v026, test::ascend_case(1, 1, false, false, {2}));
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.branch, kBranchHookSkipped);
}

TEST(AscendPolicy, FixedPassesEveryLayoutAbove) {
  Case alltoall = test::ascend_case(1, 2, true, false, {5});
  fields_of(alltoall)->lora = true;
  for (const Case& c : {issue_15451(), alltoall, test::ascend_case(2, 2, true, false, {2, 4}),
                        test::ascend_case(2, 1, true, false, {2, 4}), test::ascend_case(2, 2, false, false, {1, 3}),
                        test::ascend_case(2, 2, true, true, {1, 3}, Chip::a2, Runner::mrv2)}) {
    const Judgement j = judged(Version::fixed, c);
    EXPECT_EQ(j.verdict, Verdict::pass) << j.detail;
  }
}

}  // namespace
}  // namespace r3::ascend
