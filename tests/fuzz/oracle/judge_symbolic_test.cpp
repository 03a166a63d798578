#include <algorithm>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fuzz/oracle/host_executor.hpp"
#include "fuzz/generate/generator.hpp"
#include "fuzz/oracle/judge.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/policy.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "tests/support/case_fixtures.hpp"
#include "tests/support/case_gen.hpp"

namespace r3 {
namespace {

using test::make_case;

Judgement judge(const Case& c, const CapturePolicy& policy) {
  auto step = derive_step(c);
  R3_CHECK(step.ok(), "test case is valid");
  return judge_symbolic(c, *step, policy, policy.name());
}

// A policy with one scripted fault: always copies n_d rows from row `src` of what it receives to row `dst`.
class FixedCopyPolicy final : public CapturePolicy {
 public:
  FixedCopyPolicy(int64_t src, int64_t dst) : src_(src), dst_(dst) {}
  std::string_view name() const override { return "fixed-copy"; }
  Allocation allocate(const Case& c) const override { return {c.max_num_tokens, std::nullopt, 16}; }
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    out.branch = branch::local;
    out.copies.push_back({dst_, src_, call.metadata->num_tokens_across_dp[static_cast<size_t>(call.dp_rank)], false});
  }

 private:
  int64_t src_, dst_;
};

TEST(JudgeSymbolic, NamesTheFirstMisplacedToken) {
  const Judgement j = judge(make_case(test::kDp2, 8, {2, 3}, Path::gathered), FixedCopyPolicy(0, 0));
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::failure);
  EXPECT_EQ(j.branch, "local");
  EXPECT_EQ(j.detail, "buffer row 0 of dp 1 tp 0 holds token (0, 0), expected token (1, 0)");
  EXPECT_EQ(rank_by_rank(j)[0].verdict, Verdict::pass);
  EXPECT_EQ(rank_by_rank(j)[1].rows, (RowRange{0, 3}));
}

TEST(JudgeSymbolic, ReadingPastTheReceivedTensorIsWrongRows) {
  const Judgement j = judge(make_case(test::kDp2, 8, {2, 3}, Path::local), FixedCopyPolicy(1, 0));
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.detail, "dp 0 tp 0 copies rows [1, 3) of a 2-row tensor");
}

TEST(JudgeSymbolic, WritingPastTheBufferIsAnOverflow) {
  const Judgement j = judge(make_case(test::kDp2, 3, {3, 1}, Path::local), FixedCopyPolicy(0, 1));
  EXPECT_EQ(j.verdict, Verdict::overflow);
  EXPECT_EQ(j.severity, Severity::failure);
  EXPECT_EQ(j.detail, "capture buffer of dp 0 tp 0: 1 rows written past its end (it holds 3 rows)");
  EXPECT_EQ(rank_by_rank(j)[1].verdict, Verdict::wrong_rows);
  EXPECT_EQ(rank_by_rank(j)[1].detail, "buffer row 0 of dp 1 tp 0 holds an untouched row, expected token (1, 0)");
}

TEST(JudgeSymbolic, WritingBeforeRowZeroIsAnOverflowAsInConcreteMode) {
  const Case c = make_case(test::kDp2, 4, {3, 1}, Path::local);
  const FixedCopyPolicy policy(0, -2);
  const Judgement j = judge(c, policy);
  EXPECT_EQ(j.verdict, Verdict::overflow);
  EXPECT_EQ(j.detail, "capture buffer of dp 0 tp 0: 2 rows written before its start (it holds 4 rows)");
  const Step step = derive_step(c).value();
  const Judgement concrete = judge_concrete(c, step, execute_on_host(c, step, policy), policy.name());
  EXPECT_EQ(concrete.verdict, j.verdict);
  EXPECT_EQ(concrete.detail, j.detail);
}

TEST(JudgeSymbolic, Vllm50874PassesTheUpstreamLayouts) {
  const auto policy = make_vllm_50874_policy();
  for (Path path : {Path::gathered, Path::sp_shard}) {
    const Judgement j = judge(make_case(test::kDp2Tp2EpSp, 8, {3, 2}, path), *policy);
    EXPECT_EQ(j.verdict, Verdict::pass) << to_string(path) << ": " << j.detail;
  }
  const Judgement j = judge(make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered), *policy);
  EXPECT_EQ(rank_by_rank(j)[2].branches, (std::vector<std::string_view>{branch::gathered_shards}));
  EXPECT_EQ(rank_by_rank(j)[2].rows, (RowRange{4, 6}));
}

// corner case 2 (docs/layout-contract.md section 8): a one-row shard takes branch 3 without the TP gather.
TEST(JudgeSymbolic, OneRowShardIsLatentOnTpRankOne) {
  const Judgement j = judge(make_case(test::kDp2Tp2EpSp, 8, {1, 4}, Path::sp_shard), *make_vllm_50874_policy());
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::latent);
  EXPECT_EQ(j.branch, "local");
  EXPECT_EQ(j.detail, "buffer row 0 of dp 0 tp 1 holds SP padding row 1 of dp 0, expected token (0, 0)");
  EXPECT_EQ(rank_by_rank(j)[0].verdict, Verdict::pass);
  EXPECT_EQ(rank_by_rank(j)[1].verdict, Verdict::wrong_rows);
  EXPECT_EQ(signature_of(j, make_case(test::kDp2Tp2EpSp, 8, {1, 4}, Path::sp_shard)).text(), "vllm-50874/wrong_rows/sp_shard/local");
}

// docs/layout-contract.md 9.1: D = 2, U = 2, real tokens [10, 7] on the local path: every rank wrong, nothing raised.
TEST(JudgeSymbolic, MicrobatchesOverwriteEachOtherOnVllm50874) {
  Case c = make_case(test::kDp2, 16, {10, 7}, Path::local);
  c.padding.mode = PaddingMode::dp_max;
  c.microbatches = 2;
  const Judgement j = judge(c, *make_vllm_50874_policy());
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::failure);
  EXPECT_EQ(j.detail,
            "buffer row 0 of dp 0 tp 0 holds token (0, 5), expected token (0, 0) (call 2 of 2 wrote tokens (0, 5..9) "
            "over rows 0..4)");
  for (const RankJudgement& r : rank_by_rank(j)) {
    EXPECT_EQ(r.verdict, Verdict::wrong_rows);
    EXPECT_FALSE(r.rejected);
    EXPECT_EQ(r.branches, (std::vector<std::string_view>{branch::local, branch::local}));
  }
  EXPECT_EQ(judge(c, *make_r3_fixed_policy()).verdict, Verdict::pass);
}

TEST(JudgeSymbolic, DpChunksMostlyMatchNoBranch) {
  Case c = make_case(test::kDp2, 8, {5, 2}, Path::local);
  c.dp_chunk = 2;
  const Judgement j = judge(c, *make_vllm_50874_policy());
  EXPECT_EQ(j.verdict, Verdict::spurious_reject);
  EXPECT_EQ(j.detail,
            "dp 0 tp 0 raised on a valid case in call 1 of 3: routed experts have 2 rows; expected 7 (all DP ranks), "
            "5 (this DP rank), 4 (sum of local_sizes)");
  EXPECT_EQ(judge(c, *make_r3_fixed_policy()).verdict, Verdict::pass);
}

TEST(JudgeSymbolic, Pre50874RaisesOnPaddedShards) {
  const Judgement j = judge(make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered), *make_vllm_pre_50874_policy());
  EXPECT_EQ(j.verdict, Verdict::spurious_reject);
  EXPECT_EQ(j.severity, Severity::failure);
  EXPECT_EQ(j.branch, "error");
  EXPECT_EQ(j.detail,
            "dp 0 tp 0 raised on a valid case: assert total == n failed: routed experts have 6 rows, "
            "num_tokens_across_dp sums to 5");
}

TEST(JudgeSymbolic, Pre50874FailsWithCapacityOnTheDeployment) {
  const Case c = test::vllm_50874_deployment();
  const Judgement pre = judge(c, *make_vllm_pre_50874_policy());
  EXPECT_EQ(pre.verdict, Verdict::capacity);
  EXPECT_EQ(pre.severity, Severity::failure);
  EXPECT_EQ(pre.detail, "replay buffer has 8192 rows, the gathered batch the monolithic kernel processes has 16384");
  EXPECT_EQ(signature_of(pre, c).text(), "vllm-pre-50874/capacity/gathered/naive_total");
  const Judgement fixed = judge(c, *make_vllm_50874_policy());
  EXPECT_EQ(fixed.verdict, Verdict::pass);
  EXPECT_EQ(fixed.allocation.replay_rows, 32768);
}

TEST(JudgeSymbolic, AcceptingDisagreeingMetadataIsAMissedReject) {
  Case c = make_case(test::kDp2, 8, {3, 2}, Path::gathered);
  c.metadata = MetadataOverride{std::vector<int64_t>{2, 3}, false, {}};
  const Judgement j = judge(c, *make_vllm_50874_policy());
  EXPECT_EQ(j.verdict, Verdict::missed_reject);
  EXPECT_EQ(j.detail,
            "accepted metadata the reference rejects: metadata.num_tokens_across_dp[0] = 2, but rank 0 runs 3 rows");
  c.metadata = MetadataOverride{{}, true, std::nullopt};
  c.topology = test::kDp2Tp2EpSp;
  c.path = Path::gathered;
  EXPECT_EQ(judge(c, *make_vllm_50874_policy()).verdict, Verdict::pass);  // it raises, as it must
}

// ---- classes of identical ranks ----------------------------------------------------------

// Raises with the TP rank in its words; messages are not built while judging, so TP ranks
// 0 and 1 fall into one class, and each rank's words must still be its own.
class TpNamingRejectPolicy final : public CapturePolicy {
 public:
  std::string_view name() const override { return "tp-naming-reject"; }
  Allocation allocate(const Case& c) const override { return {c.max_num_tokens, std::nullopt, 16}; }
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    out.reject([&] { return "tp " + std::to_string(call.tp_rank) + " refuses"; });
  }
};

TEST(JudgeSymbolic, EachRankOfAClassIsWordedWithItsOwnDecision) {
  Case c = make_case(test::kDp2, 8, {2, 3}, Path::gathered);
  c.topology.tp = 2;
  const Judgement j = judge(c, TpNamingRejectPolicy());
  EXPECT_EQ(j.detail, "dp 0 tp 0 raised on a valid case: tp 0 refuses");
  ASSERT_EQ(j.rank_count(), 4u);
  EXPECT_EQ(rank_by_rank(j)[1].detail, "dp 0 tp 1 raised on a valid case: tp 1 refuses");
  EXPECT_EQ(rank_by_rank(j)[3].detail, "dp 1 tp 1 raised on a valid case: tp 1 refuses");
}

// Delegates to a policy, optionally shifting the writes of odd TP ranks by one row, and says
// it reads the TP rank: the judge must then decide every rank, and split TP groups into classes.
class TpAwarePolicy final : public CapturePolicy {
 public:
  TpAwarePolicy(std::unique_ptr<CapturePolicy> inner, bool shift_odd)
      : inner_(std::move(inner)), shift_odd_(shift_odd) {}
  std::string_view name() const override { return shift_odd_ ? "shift-odd-tp" : "tp-aware"; }
  Allocation allocate(const Case& c) const override { return inner_->allocate(c); }
  Engine engine() const override { return inner_->engine(); }
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    inner_->decide(call, out);
    if (shift_odd_ && call.tp_rank % 2 == 1)
      for (Copy& copy : out.copies) copy.dst_row += 1;
  }

 private:
  std::unique_ptr<CapturePolicy> inner_;
  bool shift_odd_;
};

std::vector<std::unique_ptr<CapturePolicy>> policies_to_compare() {
  std::vector<std::unique_ptr<CapturePolicy>> p;
  p.push_back(make_vllm_50874_policy());
  p.push_back(make_vllm_pre_50874_policy());
  p.push_back(make_r3_fixed_policy());
  p.push_back(std::make_unique<TpAwarePolicy>(make_vllm_50874_policy(), false));
  p.push_back(std::make_unique<TpAwarePolicy>(make_r3_fixed_policy(), true));
  p.push_back(sglang::make_policy(sglang::Version::upstream));
  p.push_back(sglang::make_policy(sglang::Version::miles));
  p.push_back(sglang::make_policy(sglang::Version::fixed));
  p.push_back(std::make_unique<TpAwarePolicy>(sglang::make_policy(sglang::Version::fixed), true));
  return p;
}

// Empty when the class-based judgement equals the rank-by-rank one, else the first field that differs.
std::string judgement_difference(const Judgement& a, const Judgement& b) {
  if (a.verdict != b.verdict) return "verdict";
  if (a.severity != b.severity) return "severity";
  if (a.branch != b.branch) return "branch";
  if (a.detail != b.detail) return "detail: " + a.detail + " | " + b.detail;
  const std::vector<RankJudgement> ranks_a = rank_by_rank(a), ranks_b = rank_by_rank(b);
  if (ranks_a.size() != ranks_b.size()) return "rank count";
  for (size_t r = 0; r < ranks_a.size(); ++r) {
    const RankJudgement& x = ranks_a[r];
    const RankJudgement& y = ranks_b[r];
    const bool same = x.dp == y.dp && x.tp == y.tp && x.verdict == y.verdict && x.branches == y.branches &&
                      x.rows == y.rows && x.detail == y.detail && x.rejected == y.rejected &&
                      x.tp_gathers == y.tp_gathers;
    if (!same) return "rank " + std::to_string(r) + ": " + x.detail + " | " + y.detail;
  }
  return "";
}

// Both ways of wording: every rank's (explain, exhaust) and only the reported ranks' (campaigns).
// A policy judges only its own engine's cases.
std::string classes_against_ranks(const Case& c, const CapturePolicy& policy) {
  if (policy.engine() != c.engine) return "";
  const Step step = *derive_step(c);
  for (RankDetails details : {RankDetails::every_rank, RankDetails::reported_ranks}) {
    const Judgement by_class = judge_symbolic(c, step, policy, policy.name(), details);
    const Judgement alone = judge_symbolic(c, step, policy, policy.name(), details, RankClasses::every_rank_alone);
    const std::string diff = judgement_difference(by_class, alone);
    if (!diff.empty()) return std::string(details == RankDetails::every_rank ? "every rank's words: " : "reported words: ") + diff;
  }
  return "";
}

RC_GTEST_PROP(JudgeSymbolicProperty, SglangClassesJudgeLikeEveryRankAlone, ()) {
  GeneratorOptions options;
  options.profile = Profile::any();
  options.engine = sglang::engine();
  const Case c = generate_case(*rc::gen::arbitrary<uint64_t>(), *rc::gen::inRange<uint64_t>(0, 1000), options).c;
  for (const auto& policy : policies_to_compare()) {
    const std::string diff = classes_against_ranks(c, *policy);
    if (!diff.empty()) RC_FAIL(std::string(policy->name()) + ": " + diff);
  }
}

// The classes themselves: a TP group that receives alike is one class, so a wide step costs a
// class per DP rank; a TP group that reads different shards on its own rows splits.
TEST(JudgeSymbolic, ATpGroupThatReadsAlikeIsOneClassPerDpRank) {
  Case c = make_case(test::kDp2Tp2EpSp, 16, {3, 2}, Path::gathered);
  c.topology = {64, 8, true, true};
  c.tokens.assign(64, 5);
  const Step step = *derive_step(c);
  const Judgement fixed = judge_symbolic(c, step, *make_r3_fixed_policy(), "r3-fixed");
  ASSERT_EQ(fixed.verdict, Verdict::pass);
  ASSERT_EQ(fixed.classes.size(), 64u);
  for (size_t d = 0; d < 64; ++d) {
    EXPECT_EQ(fixed.classes[d].dp, static_cast<int>(d));
    EXPECT_EQ(fixed.classes[d].tp, 0);
    EXPECT_EQ(fixed.classes[d].members, 8);
  }
  EXPECT_EQ(fixed.rank_count(), 512u);
  EXPECT_EQ(&fixed.class_of(17, 5), &fixed.classes[17]);
  // vllm-50874 on one-row SP shards: each TP rank takes its own shard for the batch (TP rank 0
  // its token, the others a padding row each), so each is a class of its own; the DP rank with
  // 16 tokens copies from the TP all-gather, and its group stays one class.
  c.path = Path::sp_shard;
  c.tokens.assign(64, 1);
  c.tokens[3] = 16;
  const Step shards = *derive_step(c);
  const Judgement j = judge_symbolic(c, shards, *make_vllm_50874_policy(), "vllm-50874", RankDetails::reported_ranks);
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::latent);
  EXPECT_EQ(j.rank_count(), 512u);
  EXPECT_EQ(j.classes.size(), 8u * 63 + 1);
  EXPECT_EQ(j.class_of(0, 3).tp, 3);
  EXPECT_EQ(j.class_of(0, 3).members, 1);
  EXPECT_EQ(j.class_of(0, 3).verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.class_of(0, 0).verdict, Verdict::pass);
  EXPECT_EQ(j.class_of(3, 6).tp, 0);
  EXPECT_EQ(j.class_of(3, 6).members, 8);
  EXPECT_EQ(j.class_of(0, 1).detail, j.detail);  // the reported words are the first failing class's lead's
}

RC_GTEST_PROP(JudgeSymbolicProperty, ClassesOfIdenticalRanksJudgeLikeEveryRankAlone, ()) {
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = true});
  for (const auto& policy : policies_to_compare()) {
    const std::string diff = classes_against_ranks(c, *policy);
    if (!diff.empty()) RC_FAIL(std::string(policy->name()) + ": " + diff);
  }
}

// The same on the campaign's own production layouts (up to 512 ranks), every profile's steps.
TEST(JudgeSymbolic, ClassesJudgeGeneratedProductionCasesLikeEveryRankAlone) {
  GeneratorOptions options;
  options.profile = Profile::any();
  options.sizes = {SizeClass::production};
  options.metadata_overrides = true;
  const auto policies = policies_to_compare();
  for (uint64_t i = 0; i < 400; ++i) {
    const Case c = generate_case(11, i, options).c;
    for (const auto& policy : policies) {
      ASSERT_EQ(classes_against_ranks(c, *policy), "") << policy->name() << " case #" << i;
    }
  }
}

// ---- properties -------------------------------------------------------------------------

bool some_rank_has_one_row(const Step& s) {
  return std::find(s.num_tokens_across_dp.begin(), s.num_tokens_across_dp.end(), 1) != s.num_tokens_across_dp.end();
}

// The basic paths: one call, no metadata override, every n_d <= M (no bucket above M), so no capacity shortfall.
RC_GTEST_PROP(JudgeSymbolicProperty, Vllm50874AgreesWithTheReferenceOnBasicPaths, ()) {
  const Case c = *test::gen_valid_case();
  const Step step = *derive_step(c);
  RC_PRE(step.capture_rows_needed <= c.max_num_tokens);
  const Judgement j = judge_symbolic(c, step, *make_vllm_50874_policy(), "vllm-50874");
  if (c.path == Path::sp_shard && some_rank_has_one_row(step)) {
    // corner case 2 (docs/layout-contract.md section 8): only TP ranks > 0 of the one-row DP ranks are wrong, so it stays latent.
    RC_ASSERT(j.verdict == Verdict::wrong_rows);
    RC_ASSERT(j.severity == Severity::latent);
    for (const RankJudgement& r : rank_by_rank(j)) {
      const bool one_row = step.num_tokens_across_dp[static_cast<size_t>(r.dp)] == 1;
      RC_ASSERT((r.verdict == Verdict::wrong_rows) == (one_row && r.tp > 0));
    }
    return;
  }
  RC_ASSERT(j.verdict == Verdict::pass);
}

RC_GTEST_PROP(JudgeSymbolicProperty, R3FixedPassesEveryValidCase, ()) {
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true});
  const Step step = *derive_step(c);
  const Judgement j = judge_symbolic(c, step, *make_r3_fixed_policy(), "r3-fixed");
  RC_ASSERT(j.verdict == Verdict::pass);
}

RC_GTEST_PROP(JudgeSymbolicProperty, JudgingIsDeterministic, ()) {
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true});
  const Step step = *derive_step(c);
  const auto policy = make_vllm_50874_policy();
  const Judgement a = judge_symbolic(c, step, *policy, "vllm-50874");
  const Judgement b = judge_symbolic(c, step, *policy, "vllm-50874");
  RC_ASSERT(a.verdict == b.verdict);
  RC_ASSERT(a.detail == b.detail);
}

}  // namespace
}  // namespace r3
