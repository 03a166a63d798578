// vllm-ascend's part of exhaust's space (fuzz/engines/ascend/exhaust.cpp): every enumerated case
// is a valid Ascend case inside the profile, each visited once, ascend-fixed passes every one and
// the main model fails some.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/exhaust/case_space.hpp"
#include "fuzz/exhaust/engine_exhaust.hpp"
#include "fuzz/oracle/judge.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/ascend/layout.hpp"
#include "reference/engines/ascend/policy.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

TEST(AscendSpace, EveryEnumeratedCaseIsInsideTheProfileAndAscendFixedPassesIt) {
  const auto fixed = ascend::make_policy(ascend::Version::fixed);
  const auto main = ascend::make_policy(ascend::Version::main);
  for (size_t variant = 0; variant < 3; ++variant) {
    ExhaustBounds b{.max_dp = 2, .max_tp = 2, .max_tokens = 3, .max_m = 3};
    b.profile = Profile::of(ascend::engine(), variant);
    std::set<std::string> seen;
    int64_t visited = 0, outside = 0, failed = 0, main_failed = 0;
    for (const CaseUnit& unit : enumerate_units(b)) {
      EXPECT_EQ(unit.engine, ascend::engine());
      visited += for_each_case(unit, b, [&](const Case& c) {
        outside += !validate(c).ok() || !in_profile(c, b.profile);
        EXPECT_TRUE(seen.insert(case_to_json_text(c)).second) << "visited twice: " << case_to_json_text(c);
        const Result<Step> step = ascend::derive_step(c);
        if (!step.ok()) return ++outside, true;
        failed += judge_symbolic(c, *step, *fixed, fixed->name()).failed();
        main_failed += judge_symbolic(c, *step, *main, main->name()).failed();
        return true;
      });
    }
    EXPECT_GT(visited, 1000) << to_string(b.profile);
    EXPECT_EQ(outside, 0);
    EXPECT_EQ(failed, 0);
    EXPECT_GT(main_failed, 0);
  }
}

TEST(AscendSpace, DefaultBoundsAndCarriers) {
  const EngineExhaust* space = engine_exhaust(ascend::engine());
  ASSERT_NE(space, nullptr);
  EXPECT_EQ(space->default_bounds().max_dp, 3);
  EXPECT_EQ(space->carriers(), (std::vector<std::string_view>{"ascend-fixed"}));
}

}  // namespace
}  // namespace r3
