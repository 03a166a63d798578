#include "fuzz/exhaust/comparison.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

Judgement judged(std::string impl, Verdict v, Severity s, std::vector<Verdict> ranks) {
  Judgement j;
  j.impl = std::move(impl);
  j.verdict = v;
  j.severity = s;
  for (size_t r = 0; r < ranks.size(); ++r) {
    RankJudgement rank;
    rank.dp = static_cast<int>(r);
    rank.verdict = ranks[r];
    j.classes.push_back(rank);
  }
  return j;
}

TEST(Comparison, SameOutcomeIsNoDifferenceWhateverTheAllocation) {
  Judgement a = judged("a", Verdict::pass, Severity::none, {Verdict::pass, Verdict::pass});
  Judgement b = judged("b", Verdict::pass, Severity::none, {Verdict::pass, Verdict::pass});
  b.allocation.replay_rows = 99;
  EXPECT_EQ(outcome_difference(a, b), std::nullopt);
}

TEST(Comparison, CaseVerdictDifference) {
  Judgement a = judged("a", Verdict::wrong_rows, Severity::failure, {Verdict::wrong_rows});
  a.branch = "local";
  a.detail = "buffer row 0 of dp 0 tp 0 holds an untouched row, expected token (0, 0)";
  Judgement b = judged("b", Verdict::pass, Severity::none, {Verdict::pass});
  EXPECT_EQ(outcome_difference(a, b),
            "a: wrong_rows failure (branch local): buffer row 0 of dp 0 tp 0 holds an untouched row, expected token "
            "(0, 0); b: pass");
}

TEST(Comparison, RankDifferenceUnderTheSameCaseVerdict) {
  Judgement a = judged("a", Verdict::overflow, Severity::failure, {Verdict::overflow, Verdict::pass});
  Judgement b = judged("b", Verdict::overflow, Severity::failure, {Verdict::overflow, Verdict::overflow});
  b.classes[1].rejected = true;
  EXPECT_EQ(outcome_difference(a, b), "dp 1 tp 0 differs: a pass; b overflow (raised)");
}

}  // namespace
}  // namespace r3
