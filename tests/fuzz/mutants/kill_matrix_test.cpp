// The harness must kill every mutant that is not equivalent: a kill rate below 100% fails
// here. Budgets are small; equivalence is decided by exhaust within the options' bounds.
#include "fuzz/mutants/kill_matrix.hpp"

#include <gtest/gtest.h>

#include "fuzz/mutants/report.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"
#include "tests/support/budget.hpp"

namespace r3 {
namespace {

MutantsOptions small_budget() {
  return {.seeds = 5, .max_cases = 2000, .shrink = false, .equivalence_bounds = ExhaustBounds{3, 3, 4, 4, 2, 1, 65536}, .jobs = 2};
}

TEST(KillMatrix, EveryNonEquivalentPolicyMutantIsKilledOnEverySeed) {
  const MutantsOptions o = small_budget();
  for (Fault f : faults_for(vllm::engine())) {
    auto m = make_mutant("r3-fixed", f);
    ASSERT_TRUE(m.ok()) << m.error().message;
    const MutantResult r = measure_mutant(*m, o);
    SCOPED_TRACE(r.fault);
    if (f == Fault::layer_unchecked) {
      // No valid case has layer >= L: the case format cannot tell this fault apart.
      EXPECT_EQ(r.status, MutantStatus::equivalent) << r.note;
      EXPECT_EQ(r.note.rfind("exhaust D<=3 T<=3 sum(tokens)<=4 M<=4 L=2 K=1 E=65536, profile any: no difference within bounds: ", 0),
                0u)
          << r.note;
      continue;
    }
    EXPECT_EQ(r.status, MutantStatus::killed) << r.note << " " << r.difference;
    EXPECT_EQ(r.kills(), o.seeds);
    EXPECT_FALSE(r.signature.empty());
  }
}

TEST(KillMatrix, HistoricalVllmPre50874IsKilled) {
  auto m = make_mutant("vllm-pre-50874", Fault::replay_per_rank);
  ASSERT_TRUE(m.ok());
  const MutantResult r = measure_mutant(*m, small_budget());
  EXPECT_EQ(r.status, MutantStatus::killed);
  EXPECT_EQ(r.kills(), 5);
}

// The GPU pipeline carries the same faults; where it is registered, none may survive.
// Under the sanitizers (tests/support/budget.hpp) one seed, the first of the default stage's
// two, which kills every killable GPU mutant on its own (R3FUZZ_TEST_BUDGET=sanitizer checks that
// in any build), and an equivalence search with D, T <= 2: every fault still runs through the
// GPU pipeline's hunt and search, at a fraction of the cost; the full claim is the default stage's.
TEST(KillMatrix, GpuMutantsAreKilledOrShownEquivalent) {
  MutantsOptions o = small_budget();
  o.seeds = test::budget(2, 1);
  o.equivalence_bounds = test::budget(*o.equivalence_bounds, ExhaustBounds{2, 2, 4, 4, 2, 1, 65536});
  for (Fault f : faults_for(vllm::engine())) {
    auto m = make_mutant("gpu", f);
    if (!m.ok()) GTEST_SKIP() << "gpu carrier unavailable: " << m.error().message;
    const MutantResult r = measure_mutant(*m, o);
    SCOPED_TRACE(r.fault);
    EXPECT_NE(r.status, MutantStatus::survived) << r.note << " " << r.difference;
  }
}

// SGLang's carriers are hunted on SGLang cases (the case generator's SGLang draws) and carry the
// faults that fit SGLang's capture; each must be killed.
TEST(KillMatrix, SglangMutantsAreKilledOnEverySeed) {
  const MutantsOptions o = small_budget();
  for (const std::string carrier : {"sglang-fixed", "gpu:sglang-fixed"}) {
    for (Fault f : faults_for(sglang::engine())) {
      auto m = make_mutant(carrier, f);
      if (!m.ok() && carrier.starts_with("gpu")) GTEST_SKIP() << "gpu carrier unavailable: " << m.error().message;
      ASSERT_TRUE(m.ok()) << m.error().message;
      const MutantResult r = measure_mutant(*m, o);
      SCOPED_TRACE(carrier + "+" + r.fault);
      EXPECT_EQ(r.status, MutantStatus::killed) << r.note << " " << r.difference;
      EXPECT_EQ(r.kills(), o.seeds);
      ASSERT_TRUE(r.detected.has_value());
      EXPECT_EQ(r.detected->engine, sglang::engine());
    }
  }
  // A fault of the other engine is no mutant of an SGLang carrier.
  EXPECT_FALSE(make_mutant("sglang-fixed", Fault::no_trim).ok());
}

// Without options' bounds, each carrier's engine decides equivalence in its own bounds
// (EngineExhaust::equivalence_bounds), under its own profile when --profile leaves it out.
TEST(KillMatrix, EquivalenceIsSearchedInTheCarriersEnginesOwnBounds) {
  auto m = make_mutant("r3-fixed", Fault::layer_unchecked);
  ASSERT_TRUE(m.ok()) << m.error().message;
  MutantsOptions o = small_budget();
  o.seeds = 1;
  o.max_cases = 1;
  o.equivalence_bounds.reset();
  o.profile = kDefaultProfile;
  const MutantResult r = measure_mutant(*m, o);
  EXPECT_EQ(r.status, MutantStatus::equivalent) << r.note;
  EXPECT_EQ(r.note.rfind("exhaust D<=3 T<=3 sum(tokens)<=5 M<=5 L=2 K=1 E=65536, profile vllm: no difference within bounds: ", 0), 0u)
      << r.note;
}

TEST(KillMatrix, SameSeedsSameCasesUntilDetection) {
  auto m = make_mutant("r3-fixed", Fault::skip_tp_gather);
  ASSERT_TRUE(m.ok());
  MutantsOptions o = small_budget();
  o.seeds = 3;
  const MutantResult a = measure_mutant(*m, o);
  const MutantResult b = measure_mutant(*m, o);
  ASSERT_EQ(a.hunts.size(), 3u);
  for (size_t i = 0; i < a.hunts.size(); ++i) EXPECT_EQ(a.hunts[i].cases, b.hunts[i].cases);
  EXPECT_EQ(a.detected, b.detected);
}

TEST(KillMatrix, SummaryKillRateExcludesEquivalentAndUnavailable) {
  std::vector<MutantResult> rows(4);
  rows[0].status = MutantStatus::killed;
  rows[1].status = MutantStatus::equivalent;
  rows[2].status = MutantStatus::survived;
  rows[3].status = MutantStatus::unavailable;
  const MutantsSummary s = summarize(rows);
  EXPECT_EQ(s.measured, 3);
  EXPECT_EQ(s.killed, 1);
  EXPECT_DOUBLE_EQ(s.kill_rate(), 0.5);
}

}  // namespace
}  // namespace r3
