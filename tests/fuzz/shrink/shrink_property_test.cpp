// Properties over Arbitrary<r3::Case> (tests/support/case_arbitrary.hpp): generated cases and
// their shrinks are valid, the fixed policy passes on every one, and the shrinker keeps the
// signature, never grows a case and is idempotent.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fuzz/oracle/judge.hpp"
#include "fuzz/oracle/policy_implementation.hpp"
#include "reference/case_measure.hpp"
#include "fuzz/shrink/implementation_judge.hpp"
#include "fuzz/generate/generator.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/policy.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "reference/layout.hpp"
#include "tests/support/budget.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"
#include "tests/support/case_gen.hpp"
#include "tests/support/case_arbitrary.hpp"
#include "tests/support/case_print.hpp"

namespace r3 {
namespace {

RC_GTEST_PROP(CaseArbitrary, GeneratesValidCasesWithValidShrinks, (const Case& c)) {
  RC_ASSERT(validate(c).ok());
  auto shrinks = test::domain_shrinks(c);
  while (auto smaller = shrinks.next()) RC_ASSERT(validate(*smaller).ok());
}

RC_GTEST_PROP(CaseArbitrary, R3FixedPassesEveryGeneratedCase, (const Case& c)) {
  auto step = derive_step(c);
  RC_ASSERT(step.ok());
  const auto policy = make_r3_fixed_policy();
  const Judgement j = judge_symbolic(c, *step, *policy, "r3-fixed");
  RC_ASSERT(j.verdict == Verdict::pass);
}

// Every candidate the shrinker judges, and so every step it takes, keeps the profile of the
// case it started from (vllm-50874 and vllm-pre-50874 fail inside every profile).
RC_GTEST_PROP(Shrinker, EveryStepKeepsTheProfile, ()) {
  const Profile p = *rc::gen::element(kDefaultProfile, Profile::of(vllm::engine(), 1), Profile::any());
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .max_rows = 8, .profile = p});
  const bool pre = *rc::gen::arbitrary<bool>();
  PolicyImplementation impl(pre ? make_vllm_pre_50874_policy() : make_vllm_50874_policy());
  const CaseJudge policy_judge = judge_with(impl, JudgeMode::symbolic);
  bool left_profile = false;
  const CaseJudge judge = [&](const Case& candidate) -> Result<Judgement> {
    if (!in_profile(candidate, p)) left_profile = true;
    return policy_judge(candidate);
  };
  RC_PRE(judge(c).value().failed());
  ShrinkOptions options;
  options.profile = p;
  options.max_judgements = 2000;
  const ShrinkResult r = shrink_case(c, judge, options).value();
  RC_ASSERT(!left_profile);
  RC_ASSERT(in_profile(r.minimal, p));
  RC_ASSERT(r.judgement.failed());
}

// Under each SGLang profile, every candidate the shrinker judges for sglang or sglang-miles lies
// inside the profile, and so does the case it ends with. 40 failing cases of the generator
// (20 under the sanitizers, which drive the same passes) cover every SGLang pass.
TEST(Shrinker, EverySglangStepKeepsTheProfile) {
  for (Profile p : {Profile::of(sglang::engine(), 0), Profile::of(sglang::engine(), 1)}) {
    PolicyImplementation impl(sglang::make_policy(p == Profile::of(sglang::engine(), 0) ? sglang::Version::upstream
                                                                       : sglang::Version::miles));
    const CaseJudge policy_judge = judge_with(impl, JudgeMode::symbolic);
    int judged_outside = 0, shrunk = 0;
    const CaseJudge judge = [&](const Case& candidate) -> Result<Judgement> {
      judged_outside += !in_profile(candidate, p) || candidate.engine != sglang::engine();
      return policy_judge(candidate);
    };
    GeneratorOptions generator;
    generator.profile = p;
    generator.sizes = {SizeClass::tiny, SizeClass::small};
    for (uint64_t i = 0; shrunk < test::budget(40, 20) && i < 20000; ++i) {
      const Case c = generate_case(3, i, generator).c;
      if (!policy_judge(c).value().failed()) continue;
      ++shrunk;
      ShrinkOptions options;
      options.profile = p;
      options.allow_path_change = true;
      options.max_judgements = 2000;
      const ShrinkResult r = shrink_case(c, judge, options).value();
      EXPECT_TRUE(in_profile(r.minimal, p)) << to_string(p);
      EXPECT_TRUE(r.judgement.failed());
      EXPECT_GT(r.stats.judged, 0);
    }
    EXPECT_EQ(shrunk, test::budget(40, 20)) << to_string(p);
    EXPECT_EQ(judged_outside, 0) << to_string(p);
  }
}

// RapidCheck's own search for a local minimum over the domain shrinks: the vllm-pre-50874
// spurious rejection on padded SP shards ends where r3fuzz shrink ends.
TEST(CaseArbitrary, RapidCheckShrinkingReachesTheMinimalSpuriousReject) {
  Case big;
  big.topology = {8, 4, true, true};
  big.model = {4, 2, 16};
  big.max_num_tokens = 64;
  big.tokens = {33, 64, 0, 7, 12, 1, 64, 30};
  big.padding = {PaddingMode::cudagraph, {4, 16}};  // below the busiest rank's count: eager, unpadded
  big.path = Path::gathered;
  big.layer = 3;
  const auto policy = make_vllm_pre_50874_policy();
  // On the gathered path (the domain shrinks may change the path: vllm-pre-50874 rejects
  // every local-path step too, a different finding).
  auto spurious = [&](const Case& c) {
    auto step = derive_step(c);
    return c.path == Path::gathered && step.ok() && judge_symbolic(c, *step, *policy, "vllm-pre-50874").verdict == Verdict::spurious_reject;
  };
  ASSERT_TRUE(spurious(big));
  const auto [minimal, steps] = rc::shrinkable::findLocalMin(rc::shrinkable::shrinkRecur(big, &test::domain_shrinks),
                                                             spurious);
  Case expected;
  expected.topology = {2, 2, true, true};
  expected.tokens = {1, 0};
  expected.path = Path::gathered;
  EXPECT_EQ(minimal, expected);
  EXPECT_GT(steps, 3u);
}

RC_GTEST_PROP(Shrinker, KeepsTheSignatureNeverGrowsAndIsIdempotent, (const Case& c)) {
  PolicyImplementation impl(*rc::gen::element(0, 1) == 0 ? make_vllm_50874_policy() : make_vllm_pre_50874_policy());
  const CaseJudge judge = judge_with(impl, JudgeMode::symbolic);
  auto once = shrink_case(c, judge);
  RC_ASSERT(once.ok());
  if (once->stop == ShrinkStop::not_failing) {
    RC_ASSERT(once->minimal == c);
    return;
  }
  RC_TAG(once->signature.text());
  RC_ASSERT(once->stop == ShrinkStop::fixpoint);
  const Case& small = once->minimal;
  RC_ASSERT(validate(small).ok());
  RC_ASSERT(signature_of(*judge(small), small) == once->signature);
  RC_ASSERT(small.topology.dp <= c.topology.dp);
  RC_ASSERT(small.topology.tp <= c.topology.tp);
  RC_ASSERT(small.max_num_tokens <= c.max_num_tokens);
  RC_ASSERT(non_default_fields(small) <= non_default_fields(c));
  auto twice = shrink_case(small, judge);
  RC_ASSERT(twice.ok());
  RC_ASSERT(twice->minimal == small);
}

}  // namespace
}  // namespace r3
