#include "fuzz/campaign/case_outcome.hpp"

#include <gtest/gtest.h>

#include "fuzz/implementations/registry.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

struct Judging {
  std::vector<std::unique_ptr<Implementation>> impls;
  GeneratorOptions generator;
  std::vector<Judgement> judgements;
  SeenSignatures seen;
  SeenSignatures::View view{seen};

  Judging() {
    for (const char* name : {"vllm-pre-50874", "r3-fixed"}) impls.push_back(std::move(make_implementation(name, {})).value());
    judgements.resize(impls.size());
  }
  CaseJudge judge() { return CaseJudge{1, &generator, Mode::mixed, &impls, &judgements, nullptr, &view}; }
};

// The judgement of one implementation on case `index`, judged afresh in the mode the outcome's
// rule picks; nullopt when the rule skips the case.
std::optional<Judgement> fresh(const Judging& j, size_t impl, uint64_t index) {
  const GeneratedCase g = generate_case(1, index, j.generator);
  const std::optional<JudgeMode> how = choose_judge_mode(Mode::mixed, *j.impls[impl], g.c);
  if (!how) return std::nullopt;
  return judge_case(*j.impls[impl], g.c, derive_step(g.c).value(), *how);
}

// Judged into one reused outcome, case after case, every field says what that case's judgement
// says: nothing of an earlier case (a failure's words, a verdict) survives into a later one.
TEST(CaseOutcome, AReusedOutcomeHoldsOnlyItsOwnCase) {
  Judging j;
  CaseOutcome out;
  size_t failures = 0, passes = 0;
  for (uint64_t index = 0; index < 300; ++index) {
    judge_case_outcome(j.judge(), index, out);
    ASSERT_TRUE(out.judged);
    ASSERT_EQ(out.index, index);
    ASSERT_FALSE(out.error.has_value());
    ASSERT_EQ(out.impls.size(), j.impls.size());
    EXPECT_EQ(out.keys.sp, generate_case(1, index, j.generator).c.topology.sp);
    for (size_t k = 0; k < j.impls.size(); ++k) {
      const ImplOutcome& o = out.impls[k];
      const std::optional<Judgement> judged = fresh(j, k, index);
      ASSERT_EQ(o.mode.has_value(), judged.has_value()) << "case " << index;
      if (!judged) continue;
      const Judgement& want = *judged;
      EXPECT_EQ(o.verdict, want.verdict) << "case " << index;
      EXPECT_EQ(o.severity, want.severity) << "case " << index;
      EXPECT_EQ(o.branch, branch_taken(want)) << "case " << index;
      EXPECT_EQ(o.failed, want.failed()) << "case " << index;
      EXPECT_FALSE(o.known_failure.has_value()) << "the merge has seen nothing";
      if (!o.failed) {
        ++passes;
        continue;
      }
      ++failures;
      ASSERT_NE(o.failing, nullptr);
      EXPECT_EQ(o.failing->judgement.detail, want.detail);
      EXPECT_EQ(o.failing->signature, signature_of(want, generate_case(1, index, j.generator).c));
    }
  }
  EXPECT_GT(failures, 10u);
  EXPECT_GT(passes, 10u);
}

// A failure whose signature the merge has seen hands over the failure's number only.
TEST(CaseOutcome, AFailureTheMergeHasSeenCarriesItsNumber) {
  Judging j;
  CaseOutcome out;
  uint64_t index = 0;
  for (;; ++index) {
    judge_case_outcome(j.judge(), index, out);
    if (out.impls[0].failed) break;
    ASSERT_LT(index, 1000u) << "vllm-pre-50874 never failed";
  }
  const Signature first = out.impls[0].failing->signature;
  j.seen.add(first, 7);
  for (uint64_t again = index; again < index + 2000; ++again) {
    judge_case_outcome(j.judge(), again, out);
    const ImplOutcome& o = out.impls[0];
    if (!o.failed) {
      EXPECT_FALSE(o.known_failure.has_value()) << "a passing case after a known failure";
      continue;
    }
    const Signature s = signature_of(*fresh(j, 0, again), generate_case(1, again, j.generator).c);
    if (s == first) {
      EXPECT_EQ(o.known_failure, 7u);
    } else {
      EXPECT_FALSE(o.known_failure.has_value());
      EXPECT_EQ(o.failing->signature, s);
    }
  }
}

}  // namespace
}  // namespace r3
