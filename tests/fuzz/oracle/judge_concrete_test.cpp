#include <gtest/gtest.h>

#include "fuzz/generate/generator.hpp"
#include "fuzz/oracle/host_executor.hpp"
#include "fuzz/oracle/judge.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "reference/provenance.hpp"
#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

using test::make_case;

Judgement run(const Case& c, const CapturePolicy& policy, ConcreteOutcome* keep = nullptr) {
  const Step step = derive_step(c).value();
  ConcreteOutcome out = execute_on_host(c, step, policy);
  Judgement j = judge_concrete(c, step, out, policy.name());
  if (keep) *keep = std::move(out);
  return j;
}

int32_t& body(GuardedImage& img, int64_t row, int64_t col) {
  return img.data[static_cast<size_t>((img.guard_rows + row) * img.row_width + col)];
}

TEST(JudgeConcrete, GatheredMonolithicOnPre50874IsCapacityWithTheReplayOverflowPerRank) {
  const Case c = make_case(test::kDp2, 4, {4, 4}, Path::gathered, true);
  const Judgement j = run(c, *make_vllm_pre_50874_policy());
  EXPECT_EQ(j.verdict, Verdict::capacity);
  EXPECT_EQ(j.severity, Severity::failure);
  EXPECT_EQ(j.detail, "replay buffer has 4 rows, the gathered batch the monolithic kernel processes has 8");
  EXPECT_EQ(j.classes[1].verdict, Verdict::overflow);
  EXPECT_EQ(j.classes[1].detail, "replay buffer of dp 1 tp 0: 4 rows written past its end (it holds 4 rows)");
}

TEST(JudgeConcrete, OneRowShardOnTpRankOneIsLatentCornerCase2) {
  const Case c = make_case(test::kDp2Tp2EpSp, 4, {1, 1}, Path::sp_shard);
  const Judgement j = run(c, *make_vllm_50874_policy());
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::latent);
  EXPECT_EQ(j.branch, "local");
  EXPECT_EQ(j.detail, "buffer row 0 of dp 0 tp 1 holds SP padding row 1 of dp 0, expected token (0, 0)");
}

TEST(JudgeConcrete, PaddedShardsOnPre50874AreSpuriousRejects) {
  const Case c = make_case(test::kDp2Tp2EpSp, 4, {3, 2}, Path::sp_shard);
  const Judgement j = run(c, *make_vllm_pre_50874_policy());
  EXPECT_EQ(j.verdict, Verdict::spurious_reject);
  EXPECT_EQ(j.detail,
            "dp 0 tp 0 raised on a valid case: assert total == n failed: routed experts have 2 rows, "
            "num_tokens_across_dp sums to 5");
}

TEST(JudgeConcrete, NamesAMisplacedTokenAndAnUntouchedRow) {
  const Case c = make_case(test::kDp2, 8, {3, 6}, Path::local);
  ConcreteOutcome out;
  const auto policy = make_r3_fixed_policy();
  ASSERT_EQ(run(c, *policy, &out).verdict, Verdict::pass);
  const Step step = derive_step(c).value();
  GuardedImage& img = out.ranks[1].capture;  // dp 1: layer 1 is columns 2..3
  body(img, 5, 2) = routing_value({RowKind::token, 0, 5}, 0);
  Judgement j = judge_concrete(c, step, out, "tampered");
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.detail, "buffer row 5 of dp 1 tp 0 holds token (0, 5), expected token (1, 5)");
  body(img, 5, 2) = untouched_value(5, 1, 0);
  j = judge_concrete(c, step, out, "tampered");
  EXPECT_EQ(j.detail, "buffer row 5 of dp 1 tp 0 holds an untouched row, expected token (1, 5)");
  body(img, 5, 2) = routing_value({RowKind::token, 1, 5}, 0);
  body(img, 7, 0) = routing_value({RowKind::token, 1, 7}, 0);  // layer 0, past n_1
  j = judge_concrete(c, step, out, "tampered");
  EXPECT_EQ(j.detail, "buffer row 7 (layer 0) of dp 1 tp 0 holds token (1, 7), expected it untouched");
}

TEST(JudgeConcrete, DamagedGuardRowsAreOverflowsCountedFromTheEnd) {
  const Case c = make_case(test::kDp2, 8, {3, 6}, Path::local);
  ConcreteOutcome out;
  run(c, *make_r3_fixed_policy(), &out);
  const Step step = derive_step(c).value();
  GuardedImage& img = out.ranks[0].capture;
  body(img, img.rows + 1, 0) = 7;  // second guard row after the end
  Judgement j = judge_concrete(c, step, out, "tampered");
  EXPECT_EQ(j.verdict, Verdict::overflow);
  EXPECT_EQ(j.detail, "capture buffer of dp 0 tp 0: 2 rows written past its end (it holds 8 rows)");
  body(img, img.rows + 1, 0) = kCanary;
  img.data[0] = 7;  // first guard row before the start
  j = judge_concrete(c, step, out, "tampered");
  EXPECT_EQ(j.detail, "capture buffer of dp 0 tp 0: 2 rows written before its start (it holds 8 rows)");
}

TEST(JudgeConcrete, MalformedOutcomesAreAdapterErrors) {
  const Case c = make_case(test::kDp2, 8, {3, 6}, Path::local);
  ConcreteOutcome out;
  run(c, *make_r3_fixed_policy(), &out);
  const Step step = derive_step(c).value();
  ConcreteOutcome short_one = out;
  short_one.ranks.pop_back();
  Judgement j = judge_concrete(c, step, short_one, "ext");
  EXPECT_EQ(j.verdict, Verdict::adapter_error);
  EXPECT_EQ(j.detail, "ext returned 1 ranks, the case has 2");
  out.ranks[1].capture.data.pop_back();
  j = judge_concrete(c, step, out, "ext");
  EXPECT_EQ(j.detail, "ext capture buffer of dp 1 tp 0 holds 95 values, its shape needs 96");
}

TEST(JudgeConcrete, NarrowReplayStorageTruncatesWideExpertIds) {
  // Corner case 9: 40000 experts in int16 replay storage. r3-fixed widens; vllm-50874 does not.
  // Routing values of tokens past index 511 exceed 32767, so their expert ids do not fit int16.
  Case c = make_case(test::kDp2, 600, {600, 600}, Path::gathered, true);
  c.model.experts = 40000;
  const Judgement fixed = run(c, *make_r3_fixed_policy());
  EXPECT_EQ(fixed.verdict, Verdict::pass);
  const Judgement vllm = run(c, *make_vllm_50874_policy());
  EXPECT_EQ(vllm.verdict, Verdict::wrong_rows);
  EXPECT_NE(vllm.detail.find("replay buffer row"), std::string::npos) << vllm.detail;
  EXPECT_NE(vllm.detail.find("(stored as int16)"), std::string::npos) << vllm.detail;
}

// Symbolic and concrete judging must agree on every case small enough to run both.
TEST(JudgeConcrete, AgreesWithTheSymbolicJudgeOnGeneratedCases) {
  GeneratorOptions options;
  options.sizes = {SizeClass::tiny, SizeClass::small};
  options.metadata_overrides = true;
  const auto policies = {make_vllm_50874_policy(), make_vllm_pre_50874_policy(), make_r3_fixed_policy()};
  int compared = 0;
  for (uint64_t i = 0; i < 3000; ++i) {
    const Case c = generate_case(7, i, options).c;
    if (!provenance_fits(c)) continue;
    const Step step = derive_step(c).value();
    for (const auto& policy : policies) {
      const Judgement s = judge_symbolic(c, step, *policy, policy->name());
      const Judgement k = judge_concrete(c, step, execute_on_host(c, step, *policy), policy->name());
      ASSERT_EQ(to_string(k.verdict), to_string(s.verdict)) << policy->name() << " case #" << i << ": " << k.detail
                                                            << " | " << s.detail;
      ASSERT_EQ(k.severity, s.severity) << policy->name() << " case #" << i;
      ASSERT_EQ(k.branch, s.branch) << policy->name() << " case #" << i;
      ++compared;
    }
  }
  EXPECT_GT(compared, 8000);
}

}  // namespace
}  // namespace r3
