// TensorRT-LLM's case draw (fuzz/engines/trtllm/draw.cpp) tested with itself: every source draws
// trtllm cases that validate and lie inside profile trtllm, the seeded generator reaches both
// paddings and a graph bucket above the rows, every generated case round-trips through both codecs,
// and the three per-step models pass each one (within the profile they decide alike).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/generate/byte_source.hpp"
#include "fuzz/generate/enumerating_source.hpp"
#include "fuzz/generate/generator.hpp"
#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/oracle/policy_implementation.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/engines/trtllm/policy.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"
#include "tests/support/budget.hpp"
#include "tests/support/rc_source.hpp"

namespace r3 {
namespace {

const Profile kTrtllm = Profile::of(trtllm::engine(), 0);

// Why `c` is not a trtllm case of the profile, or "" when it is one.
std::string outside(const Case& c) {
  if (c.engine != trtllm::engine()) return "another engine's case";
  if (Status valid = validate(c); !valid.ok()) return "invalid: " + valid.error().message;
  if (Status inside = check_profile(c, kTrtllm); !inside.ok()) return "outside: " + inside.error().message;
  return "";
}

std::vector<Case> generated(int count) {
  GeneratorOptions options;
  options.profile = kTrtllm;
  std::vector<Case> out;
  for (int i = 0; i < count; ++i) out.push_back(generate_case(20261206, static_cast<uint64_t>(i), options).c);
  return out;
}

int case_count() { return test::budget(2000, 300); }

TEST(TrtllmDomain, TheSeededGeneratorStaysInsideTheProfileAndPadsSomeForwards) {
  int padded = 0, unpadded = 0, above_largest = 0;
  for (const Case& c : generated(case_count())) {
    ASSERT_EQ(outside(c), "") << case_to_json_text(c);
    ASSERT_EQ(c.topology.dp, 1);
    ASSERT_EQ(c.tokens.size(), 1u);
    if (c.padding.mode == PaddingMode::cudagraph) {
      ++padded;
      // Every captured batch size fits the buffer (a padded batch never exceeds the engine's).
      EXPECT_LE(c.padding.cudagraph_sizes.back(), c.max_num_tokens) << case_to_json_text(c);
      above_largest += c.tokens[0] > c.padding.cudagraph_sizes.back();
    } else {
      EXPECT_EQ(c.padding.mode, PaddingMode::none) << case_to_json_text(c);
      ++unpadded;
    }
  }
  EXPECT_GT(padded, 0);
  EXPECT_GT(unpadded, 0);
  EXPECT_GT(above_largest, 0);  // a batch above the largest graph runs eagerly, unpadded
}

RC_GTEST_PROP(TrtllmDomain, EverySourceDrawsInsideTheProfile, ()) {
  const SizeClass size = *rc::gen::element(SizeClass::tiny, SizeClass::small, SizeClass::production);
  const CaseDomain domain{kTrtllm, bounds_of(size), std::nullopt};
  RC_TAG(to_string(size));
  const auto bytes = *rc::gen::arbitrary<std::vector<uint8_t>>();
  ByteSource from_bytes(bytes);
  RC_ASSERT(outside(draw(from_bytes, domain)) == "");
  test::RcSource from_rc;
  RC_ASSERT(outside(draw(from_rc, domain)) == "");
  EnumeratingSource enumerator;
  const int skip = *rc::gen::inRange(0, 300);
  for (int i = 0; i < skip; ++i) {
    draw(enumerator, domain);
    if (!enumerator.advance()) break;
  }
  RC_ASSERT(outside(draw(enumerator, domain)) == "");
}

TEST(TrtllmDomain, EveryGeneratedCaseRoundTripsThroughBothCodecs) {
  for (const Case& c : generated(case_count())) {
    const Result<Case> json = case_from_json_text(case_to_json_text(c));
    ASSERT_TRUE(json.ok()) << json.error().message << "\n" << case_to_json_text(c);
    EXPECT_EQ(*json, c) << case_to_json_text(c);
    const Result<Case> binary = case_from_binary(case_to_binary(c), full_binary_limits());
    ASSERT_TRUE(binary.ok()) << binary.error().message << "\n" << case_to_json_text(c);
    EXPECT_EQ(*binary, c) << case_to_json_text(c);
  }
}

TEST(TrtllmDomain, TheThreeModelsPassEveryGeneratedCaseBothWays) {
  int concrete = 0;
  for (auto make : {trtllm::make_policy_l, trtllm::make_policy_e, trtllm::make_policy_fixed}) {
    const PolicyImplementation impl(make());
    for (const Case& c : generated(case_count())) {
      const Step step = derive_step(c).value();
      const Judgement symbolic = judge_case(impl, c, step, JudgeMode::symbolic);
      EXPECT_FALSE(symbolic.failed()) << impl.name() << ": " << symbolic.detail << "\n" << case_to_json_text(c);
      if (!fits_concrete(c)) continue;
      ++concrete;
      const Judgement real = judge_case(impl, c, step, JudgeMode::concrete);
      EXPECT_FALSE(real.failed()) << impl.name() << ": " << real.detail << "\n" << case_to_json_text(c);
    }
  }
  EXPECT_GT(concrete, case_count());  // the tiny and small classes run concretely, for each model
}

}  // namespace
}  // namespace r3
