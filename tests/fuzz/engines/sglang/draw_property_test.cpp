// The SGLang half of the case domain (fuzz/engines/sglang/draw.hpp) tested with itself: every
// source draws SGLang cases that validate and lie inside each SGLang profile, every generated
// case derives a step, round-trips through both codecs, passes sglang-fixed (symbolically and
// concretely), and the three models judge it alike symbolically and concretely.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/generate/byte_source.hpp"
#include "fuzz/generate/enumerating_source.hpp"
#include "fuzz/generate/generator.hpp"
#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/oracle/policy_implementation.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/layout.hpp"
#include "reference/engines/sglang/policy.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"
#include "tests/support/budget.hpp"
#include "tests/support/rc_source.hpp"

namespace r3 {
namespace {

// Why `c` is not an SGLang case of `profile`, or "" when it is one.
std::string outside(const Case& c, Profile profile) {
  if (c.engine != sglang::engine()) return "a vLLM case";
  if (Status valid = validate(c); !valid.ok()) return "invalid: " + valid.error().message;
  if (Status inside = check_profile(c, profile); !inside.ok()) return "outside: " + inside.error().message;
  return "";
}

const Profile kSglangProfiles[] = {Profile::of(sglang::engine(), 0), Profile::of(sglang::engine(), 1)};

// Cases a campaign of `profile` generates: seeds 1.., every size class.
std::vector<Case> generated(Profile profile, int count) {
  GeneratorOptions options;
  options.profile = profile;
  std::vector<Case> out;
  for (int i = 0; i < count; ++i) out.push_back(generate_case(20261130, static_cast<uint64_t>(i), options).c);
  return out;
}

// 3000 cases per profile draw every capture layout, TBO and both graphs many times over; under the
// sanitizers 300 still reach each layout (the draw's branches are the same at any count).
int case_count() { return test::budget(3000, 300); }

TEST(SglangDomain, TheSeededGeneratorStaysInsideEachSglangProfile) {
  for (Profile p : kSglangProfiles) {
    std::set<std::string> layouts;
    for (const Case& c : generated(p, case_count())) {
      ASSERT_EQ(outside(c, p), "") << to_string(p);
      layouts.insert(std::string(sglang::to_string(sglang::capture_layout_of(c))));
    }
    EXPECT_EQ(layouts.size(), 6u) << to_string(p);  // every capture layout is reached
  }
}

TEST(SglangDomain, ProfileAnyDrawsBothEnginesOrTheOneItIsGiven) {
  GeneratorOptions any;
  any.profile = Profile::any();
  int sglang_cases = 0;
  for (uint64_t i = 0; i < 200; ++i) sglang_cases += generate_case(7, i, any).c.engine == sglang::engine();
  EXPECT_GT(sglang_cases, 0);
  EXPECT_LT(sglang_cases, 200);
  any.engine = sglang::engine();
  for (uint64_t i = 0; i < 100; ++i) {
    const Case c = generate_case(7, i, any).c;
    EXPECT_EQ(c.engine, sglang::engine());
    EXPECT_TRUE(validate(c).ok());
  }
}

RC_GTEST_PROP(SglangDomain, EverySourceDrawsInsideTheProfile, ()) {
  const Profile p = *rc::gen::element(Profile::of(sglang::engine(), 0), Profile::of(sglang::engine(), 1));
  const SizeClass size = *rc::gen::element(SizeClass::tiny, SizeClass::small, SizeClass::production);
  const CaseDomain domain{p, bounds_of(size), std::nullopt};
  RC_TAG(to_string(p), to_string(size));
  const auto bytes = *rc::gen::arbitrary<std::vector<uint8_t>>();
  ByteSource from_bytes(bytes);
  const std::string of_bytes = outside(draw(from_bytes, domain), p);
  RC_ASSERT(of_bytes == "");
  test::RcSource from_rc;
  const std::string of_rc = outside(draw(from_rc, domain), p);
  RC_ASSERT(of_rc == "");
  EnumeratingSource enumerator;
  const int skip = *rc::gen::inRange(0, 300);
  for (int i = 0; i < skip; ++i) {
    draw(enumerator, domain);
    if (!enumerator.advance()) break;
  }
  const std::string enumerated = outside(draw(enumerator, domain), p);
  RC_ASSERT(enumerated == "");
}

TEST(SglangDomain, EveryGeneratedCaseRoundTripsThroughBothCodecs) {
  for (Profile p : kSglangProfiles) {
    for (const Case& c : generated(p, case_count())) {
      const Result<Case> json = case_from_json_text(case_to_json_text(c));
      ASSERT_TRUE(json.ok()) << json.error().message << "\n" << case_to_json_text(c);
      EXPECT_EQ(*json, c) << case_to_json_text(c);
      const Result<Case> binary = case_from_binary(case_to_binary(c), full_binary_limits());
      ASSERT_TRUE(binary.ok()) << binary.error().message << "\n" << case_to_json_text(c);
      EXPECT_EQ(*binary, c) << case_to_json_text(c);
    }
  }
}

TEST(SglangDomain, SglangFixedPassesEveryGeneratedCaseBothWays) {
  const PolicyImplementation fixed(sglang::make_policy(sglang::Version::fixed));
  int concrete = 0;
  for (Profile p : kSglangProfiles) {
    for (const Case& c : generated(p, case_count())) {
      const Result<Step> step = derive_step(c);
      ASSERT_TRUE(step.ok()) << step.error().message << "\n" << case_to_json_text(c);
      const Judgement symbolic = judge_case(fixed, c, *step, JudgeMode::symbolic);
      EXPECT_FALSE(symbolic.failed()) << symbolic.detail << "\n" << case_to_json_text(c);
      if (!fits_concrete(c)) continue;
      ++concrete;
      const Judgement real = judge_case(fixed, c, *step, JudgeMode::concrete);
      EXPECT_FALSE(real.failed()) << real.detail << "\n" << case_to_json_text(c);
    }
  }
  EXPECT_GT(concrete, case_count() / 2);  // the tiny and small classes run concretely
}

TEST(SglangDomain, SymbolicAndConcreteJudgesAgreeOnTheThreeModels) {
  int failures = 0;
  for (sglang::Version v : {sglang::Version::upstream, sglang::Version::miles, sglang::Version::fixed}) {
    const PolicyImplementation impl(sglang::make_policy(v));
    for (Profile p : kSglangProfiles) {
      for (const Case& c : generated(p, case_count())) {
        if (!fits_concrete(c)) continue;
        const Step step = derive_step(c).value();
        const Judgement symbolic = judge_case(impl, c, step, JudgeMode::symbolic);
        const Judgement concrete = judge_case(impl, c, step, JudgeMode::concrete);
        failures += symbolic.failed();
        EXPECT_EQ(to_string(symbolic.verdict), to_string(concrete.verdict))
            << impl.name() << ": " << symbolic.detail << " | " << concrete.detail << "\n" << case_to_json_text(c);
        EXPECT_EQ(to_string(symbolic.severity), to_string(concrete.severity))
            << impl.name() << ": " << symbolic.detail << " | " << concrete.detail << "\n" << case_to_json_text(c);
      }
    }
  }
  EXPECT_GT(failures, 0);  // the agreement covers failing cases, not only passing ones
}

}  // namespace
}  // namespace r3
