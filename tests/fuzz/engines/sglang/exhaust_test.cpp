// SGLang's part of exhaust's space (fuzz/engines/sglang/exhaust.cpp), through the generic
// enumeration: every enumerated case is a valid SGLang case inside the profile, each visited
// once, and sglang-fixed passes every one.
#include "fuzz/engines/sglang/exhaust.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/exhaust/case_space.hpp"
#include "fuzz/exhaust/engine_exhaust.hpp"
#include "fuzz/oracle/judge.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/layout.hpp"
#include "reference/engines/sglang/policy.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"
#include "tests/support/budget.hpp"

namespace r3 {
namespace {

Profile sglang_profile() { return Profile::of(sglang::engine(), 0); }
Profile sglang_miles() { return Profile::of(sglang::engine(), 1); }

ExhaustBounds small_bounds(Profile p) {
  ExhaustBounds b;
  b.max_dp = 2;
  b.max_tp = 2;
  // Sums up to 3 tokens give every capture layout, TBO and both graphs (2.5 s); under the
  // sanitizers sums up to 2 still do, in a fifth of the cases.
  b.max_tokens = test::budget(3, 2);
  b.max_m = b.max_tokens;
  b.profile = p;
  b.engine = sglang::engine();  // under profile any, SGLang's units alone
  return b;
}

TEST(SglangSpace, EveryEnumeratedCaseIsInsideTheProfileAndSglangFixedPassesIt) {
  const auto fixed = sglang::make_policy(sglang::Version::fixed);
  for (Profile p : {sglang_profile(), sglang_miles()}) {
    const ExhaustBounds b = small_bounds(p);
    std::set<std::string> seen, layouts;
    int64_t visited = 0, outside = 0, failed = 0;
    for (const CaseUnit& unit : enumerate_units(b)) {
      EXPECT_EQ(unit.engine, sglang::engine());
      ASSERT_NE(unit.shape.get<sglang::UnitShape>(), nullptr);
      visited += for_each_case(unit, b, [&](const Case& c) {
        outside += c.engine != sglang::engine() || !validate(c).ok() || !in_profile(c, p);
        const std::string text = case_to_json_text(c);
        EXPECT_TRUE(seen.insert(text).second) << "visited twice: " << text;
        const Result<Step> step = derive_step(c);
        if (!step.ok()) return ++outside, true;
        layouts.insert(std::string(sglang::to_string(sglang::forward_of(*step)->capture)));
        failed += judge_symbolic(c, *step, *fixed, fixed->name()).failed();
        return true;
      });
    }
    EXPECT_GT(visited, 500) << to_string(p);
    EXPECT_EQ(static_cast<int64_t>(seen.size()), visited);
    EXPECT_EQ(outside, 0) << to_string(p);
    EXPECT_EQ(failed, 0) << to_string(p);
    EXPECT_EQ(layouts.size(), 6u) << to_string(p);
  }
}

TEST(SglangSpace, TheVisitorStopsTheEnumeration) {
  const ExhaustBounds b = small_bounds(sglang_profile());
  const auto units = enumerate_units(b);
  ASSERT_FALSE(units.empty());
  // The first unit is dp 1's idle extend: outside the profile (an all-idle forward), so empty.
  EXPECT_EQ(units.front().counts, (std::vector<int64_t>{0}));
  EXPECT_EQ(*units.front().shape.get<sglang::UnitShape>(), (sglang::UnitShape{sglang::A2a::none, sglang::ForwardKind::extend}));
  EXPECT_EQ(for_each_case(units.front(), b, [](const Case&) { return true; }), 0);
  int calls = 0;
  EXPECT_EQ(for_each_case(units[1], b, [&](const Case&) { return ++calls < 3; }), 3);
}

TEST(SglangSpace, EachUnitsCountIsWhatVisitingItGives) {
  // count_cases() visits the knobs at one size the counts fit, and multiplies.
  const EngineExhaust* space = engine_exhaust(sglang::engine());
  ASSERT_NE(space, nullptr);
  for (Profile p : {Profile::any(), sglang_profile(), sglang_miles()}) {
    const ExhaustBounds b = small_bounds(p);
    int64_t units = 0, empty = 0;
    for (const CaseUnit& unit : enumerate_units(b)) {
      const int64_t visited = for_each_case(unit, b, [](const Case&) { return true; });
      EXPECT_EQ(space->count_cases(unit, b), visited) << to_string(p) << " unit " << units;
      ++units;
      empty += visited == 0;
    }
    // Inside a profile, a forward with every rank idle has no case.
    if (!p.is_any()) {
      EXPECT_GT(empty, 0) << to_string(p);
    }
    EXPECT_LT(empty, units) << to_string(p);
  }
}

}  // namespace
}  // namespace r3
