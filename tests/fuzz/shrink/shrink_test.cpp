#include "fuzz/shrink/shrink.hpp"

#include <gtest/gtest.h>

#include "fuzz/oracle/policy_implementation.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "tests/support/case_print.hpp"
#include "fuzz/shrink/implementation_judge.hpp"
#include "reference/policy.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

// A production-sized step: DP32, TP8 with EP and SP, thousands of tokens per rank.
Case production_case(Path path, bool monolithic) {
  Case c;
  c.topology = {32, 8, true, true};
  c.model = {48, 8, 256};
  c.max_num_tokens = 8192;
  for (int d = 0; d < 32; ++d) c.tokens.push_back(1000 + 217 * d);  // 1000, 1217, ...: most not multiples of 8
  c.path = path;
  c.monolithic = monolithic;
  c.layer = 31;
  c.note = "production-sized";
  return c;
}

struct Shrunk {
  ShrinkResult result;
  std::vector<std::string> progress;
};

Shrunk shrink_for(std::unique_ptr<CapturePolicy> policy, const Case& c, ShrinkOptions options = {}) {
  PolicyImplementation impl(std::move(policy));
  Shrunk out;
  options.progress = [&](const std::string& line) { out.progress.push_back(line); };
  auto result = shrink_case(c, judge_with(impl, JudgeMode::symbolic), options);
  EXPECT_TRUE(result.ok()) << result.error().message;
  out.result = std::move(result).value();
  return out;
}

Case expected_spurious_reject_case() {
  Case c;
  c.topology = {2, 2, true, true};
  c.max_num_tokens = 1;
  c.tokens = {1, 0};
  c.path = Path::gathered;
  return c;
}

// vLLM before #50874 asserted sum(num_tokens_across_dp) == rows on the gathered path; with SP
// the gathered rows include each rank's shard padding. The smallest case that shows it is
// unique: two ranks (SP needs dp > 1), TP 2, one token on one rank, M 1.
TEST(Shrink, PrePr50874SpuriousRejectShrinksToTheUniqueMinimalCase) {
  const Shrunk s = shrink_for(make_vllm_pre_50874_policy(), production_case(Path::gathered, false));
  EXPECT_EQ(s.result.stop, ShrinkStop::fixpoint);
  EXPECT_EQ(s.result.signature.text(), "vllm-pre-50874/spurious_reject/gathered/error");
  EXPECT_EQ(s.result.judgement.severity, Severity::failure);
  EXPECT_EQ(s.result.minimal, expected_spurious_reject_case());
  EXPECT_GT(s.result.stats.accepted, 5);
  EXPECT_EQ(s.progress.front().rfind("shrink: dp: dp 32 -> 16; tokens [", 0), 0u) << s.progress.front();
  EXPECT_EQ(s.progress.back().substr(0, 36), "shrink: stopped at fixpoint after 2 ");
}

// Before #50874 the monolithic replay buffer held M rows; the gathered batch of two ranks
// holding one token each already needs two.
TEST(Shrink, PrePr50874ReplayCapacityShrinksToTwoRanksOfOneToken) {
  Case c = production_case(Path::gathered, true);
  for (int64_t& t : c.tokens) t = t / 8 * 8;  // no SP padding: the policy's naive branch accepts
  const Shrunk s = shrink_for(make_vllm_pre_50874_policy(), c);
  EXPECT_EQ(s.result.signature.text(), "vllm-pre-50874/capacity/gathered/naive_total");
  Case expected;
  expected.topology = {2, 1, false, false};
  expected.tokens = {1, 1};
  expected.path = Path::gathered;
  expected.monolithic = true;
  EXPECT_EQ(s.result.minimal, expected);
}

// docs/layout-contract.md 9.1: every micro-batch writes from buffer row 0. Two micro-batches need a rank with
// two tokens; the other rank idles.
TEST(Shrink, MicroBatchOverwriteShrinksToTwoTokensOnOneRank) {
  Case c = production_case(Path::local, false);
  c.topology.sp = false;
  c.padding = {PaddingMode::dp_max, {}};
  c.microbatches = 2;
  const Shrunk s = shrink_for(make_vllm_50874_policy(), c);
  EXPECT_EQ(s.result.signature.text(), "vllm-50874/wrong_rows/local/local");
  Case expected;
  expected.topology = {2, 1, false, false};
  expected.max_num_tokens = 2;
  expected.tokens = {2, 0};
  expected.padding = {PaddingMode::dp_max, {}};
  expected.path = Path::local;
  expected.microbatches = 2;
  EXPECT_EQ(s.result.minimal, expected);
}

TEST(Shrink, IsIdempotentAtTheFixpoint) {
  const Shrunk once = shrink_for(make_vllm_pre_50874_policy(), production_case(Path::gathered, false));
  const Shrunk twice = shrink_for(make_vllm_pre_50874_policy(), once.result.minimal);
  EXPECT_EQ(twice.result.minimal, once.result.minimal);
  EXPECT_EQ(twice.result.stats.accepted, 0);
  EXPECT_EQ(twice.result.stop, ShrinkStop::fixpoint);
}

TEST(Shrink, APassingCaseIsReportedAsNotFailing) {
  const Case c = expected_spurious_reject_case();
  const Shrunk s = shrink_for(make_r3_fixed_policy(), c);
  EXPECT_EQ(s.result.stop, ShrinkStop::not_failing);
  EXPECT_EQ(s.result.minimal, c);
  EXPECT_EQ(s.result.judgement.verdict, Verdict::pass);
  EXPECT_EQ(s.result.stats.judged, 0);
}

TEST(Shrink, AnInvalidCaseIsAnErrorNamingTheField) {
  Case c = expected_spurious_reject_case();
  c.tokens = {1};
  PolicyImplementation impl(make_r3_fixed_policy());
  auto result = shrink_case(c, judge_with(impl, JudgeMode::symbolic));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "tokens: has 1 entries, topology.dp is 2 (one count per DP rank)");
}

TEST(Shrink, AJudgeErrorOnTheInputIsAnError) {
  auto result = shrink_case(expected_spurious_reject_case(),
                            [](const Case&) -> Result<Judgement> { return Error{"adapter died"}; });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "adapter died");
}

// Candidates the implementation fails on count as not reproducing; shrinking goes on.
TEST(Shrink, JudgeErrorsOnCandidatesAreCountedAndSkipped) {
  PolicyImplementation impl(make_vllm_pre_50874_policy());
  const CaseJudge inner = judge_with(impl, JudgeMode::symbolic);
  const Case input = production_case(Path::gathered, false);
  auto result = shrink_case(input, [&](const Case& c) -> Result<Judgement> {
    if (c.topology.dp == 16) return Error{"adapter died"};
    return inner(c);
  });
  ASSERT_TRUE(result.ok());
  EXPECT_GT(result->stats.judge_errors, 0);
  EXPECT_EQ(result->minimal, expected_spurious_reject_case());
}

TEST(Shrink, StopsAtTheJudgementLimitWithAValidFailingCase) {
  ShrinkOptions options;
  options.max_judgements = 3;
  const Shrunk s = shrink_for(make_vllm_pre_50874_policy(), production_case(Path::gathered, false), options);
  EXPECT_EQ(s.result.stop, ShrinkStop::judgement_limit);
  EXPECT_EQ(s.result.stats.judged, 3);
  EXPECT_TRUE(validate(s.result.minimal).ok());
  EXPECT_LT(s.result.minimal.topology.dp, 32);
  EXPECT_EQ(s.result.signature.text(), "vllm-pre-50874/spurious_reject/gathered/error");
}

// A failure on TP rank 0 must not shrink into a difference only unpublished ranks show.
TEST(Shrink, KeepsTheSeverity) {
  // vllm-50874 on a one-row SP shard: TP rank 1 captures padding (latent) ...
  Case c;
  c.topology = {4, 4, true, true};
  c.max_num_tokens = 64;
  c.tokens = {1, 1, 1, 1};
  c.path = Path::sp_shard;
  const Shrunk s = shrink_for(make_vllm_50874_policy(), c);
  EXPECT_EQ(s.result.judgement.severity, Severity::latent);
  EXPECT_EQ(s.result.signature.text(), "vllm-50874/wrong_rows/sp_shard/local");
  // [1, 0] is also latent, but rank 0's one row then equals the total: branch naive_total.
  EXPECT_EQ(s.result.minimal.tokens, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(s.result.minimal.topology, (Topology{2, 2, true, true}));
}

// A CUDA-graph bucket above M overflows the capture buffer on any path: allowed to, the
// shrinker reaches the single path; by default the path (part of the signature) stays.
TEST(Shrink, PathChangesOnlyWhenAllowed) {
  Case c;
  c.topology = {4, 2, true, false};
  c.max_num_tokens = 8;
  c.tokens = {3, 8, 0, 5};
  c.padding = {PaddingMode::cudagraph, {4, 16}};
  c.path = Path::gathered;
  const Shrunk kept = shrink_for(make_vllm_50874_policy(), c);
  EXPECT_EQ(kept.result.minimal.path, Path::gathered);
  EXPECT_EQ(kept.result.signature.text(), "vllm-50874/capacity/gathered/error");
  ShrinkOptions options;
  options.allow_path_change = true;
  const Shrunk moved = shrink_for(make_vllm_50874_policy(), c, options);
  Case expected;
  expected.tokens = {0};  // an idle rank still runs the smallest bucket
  expected.padding = {PaddingMode::cudagraph, {2}};
  EXPECT_EQ(moved.result.minimal, expected);
  EXPECT_EQ(moved.result.judgement.verdict, Verdict::capacity);
  EXPECT_EQ(moved.result.judgement.branch, "error");  // the policy raises on the short capture buffer
}

}  // namespace
}  // namespace r3
