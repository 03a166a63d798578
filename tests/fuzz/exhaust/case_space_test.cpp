#include "fuzz/exhaust/case_space.hpp"

#include <gtest/gtest.h>

#include "fuzz/engines/vllm/exhaust.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

// The whole case space (profile any): these tests are about the enumeration itself, through
// vLLM's part (fuzz/engines/vllm/exhaust.hpp); SGLang's has its own tests
// (tests/fuzz/engines/sglang/exhaust_test.cpp).
ExhaustBounds tiny() { return {.max_dp = 2, .max_tp = 1, .max_tokens = 2, .max_m = 2, .profile = Profile::any(), .engine = vllm::engine()}; }

Profile vllm_legacy() { return Profile::of(vllm::engine(), 1); }
Profile sglang_profile() { return Profile::of(sglang::engine(), 0); }
Profile sglang_miles() { return Profile::of(sglang::engine(), 1); }

TEST(CaseSpace, UnitsComeInTheStatedOrder) {
  std::vector<std::pair<bool, std::vector<int64_t>>> got;
  for (const CaseUnit& u : enumerate_units(tiny())) got.push_back({u.topology.ep, u.counts});
  using V = std::vector<int64_t>;
  const std::vector<std::pair<bool, std::vector<int64_t>>> want = {
      {false, V{0}},    {false, V{1}},    {false, V{2}},                                      // D=1 plain
      {true, V{0}},     {true, V{1}},     {true, V{2}},                                       // D=1 ep
      {false, V{0, 0}}, {false, V{0, 1}}, {false, V{1, 0}}, {false, V{0, 2}}, {false, V{1, 1}},
      {false, V{2, 0}},                                                                     // D=2 plain
      {true, V{0, 0}},  {true, V{0, 1}},  {true, V{1, 0}},  {true, V{0, 2}},  {true, V{1, 1}},
      {true, V{2, 0}},                                                                      // D=2 ep
  };
  EXPECT_EQ(got, want);
}

TEST(CaseSpace, SpNeedsTwoDpAndTwoTpRanks) {
  ExhaustBounds b = tiny();
  b.max_tp = 2;
  int sp_units = 0;
  for (const CaseUnit& u : enumerate_units(b)) {
    if (!u.topology.sp) continue;
    ++sp_units;
    EXPECT_EQ(u.topology.dp, 2);
    EXPECT_EQ(u.topology.tp, 2);
    EXPECT_TRUE(u.topology.ep);
  }
  EXPECT_EQ(sp_units, 6);  // the six D=2 token vectors with sum <= 2
}

// Under profile any every engine's units come, in registry order, each engine's in its own.
TEST(CaseSpace, EnginesComeInRegistryOrder) {
  const ExhaustBounds b{.max_dp = 1, .max_tp = 1, .max_tokens = 0, .max_m = 1, .profile = Profile::any()};
  std::vector<Engine> engines;
  for (const CaseUnit& u : enumerate_units(b)) engines.push_back(u.engine);
  std::vector<Engine> want(2, vllm::engine());  // plain and ep
  want.resize(2 + 4 * 3, sglang::engine());     // every a2a backend and forward kind
  want.push_back(trtllm::engine());              // one rank, TP 1
  want.resize(2 + 4 * 3 + 1 + 2, ascend::engine());  // plain and ep
  EXPECT_EQ(engines, want);
}

TEST(CaseSpace, PaddingVariants) {
  EXPECT_EQ(vllm::padding_variant(0, 5), (Padding{PaddingMode::none, {}}));
  EXPECT_EQ(vllm::padding_variant(1, 5), (Padding{PaddingMode::dp_max, {}}));
  EXPECT_EQ(vllm::padding_variant(2, 5), (Padding{PaddingMode::cudagraph, {1}}));
  EXPECT_EQ(vllm::padding_variant(3, 5), (Padding{PaddingMode::cudagraph, {2, 4, 8}}));
  EXPECT_EQ(vllm::padding_variant(3, 1), (Padding{PaddingMode::cudagraph, {2}}));
  EXPECT_EQ(vllm::padding_variant(4, 5), (Padding{PaddingMode::cudagraph, {6}}));
}

TEST(CaseSpace, ASingleRankUnitExpandsToEveryPaddingMonolithicAndLayer) {
  ExhaustBounds b = tiny();
  b.max_m = 1;
  const CaseUnit unit{vllm::engine(), {1, 1, false, false}, {0}};
  std::vector<std::string> seen;
  const int64_t n = for_each_case(unit, b, [&](const Case& c) {
    EXPECT_EQ(c.path, Path::single);
    EXPECT_EQ(c.max_num_tokens, 1);
    seen.push_back(std::to_string(static_cast<int>(c.padding.mode)) + (c.monolithic ? "m" : "-") +
                   std::to_string(c.layer));
    return true;
  });
  EXPECT_EQ(n, 20);  // 5 paddings x monolithic or not x layers 0 and 1
  EXPECT_EQ(seen.front(), "0-0");
  EXPECT_EQ(seen[1], "0-1");
  EXPECT_EQ(seen[2], "0m0");
  EXPECT_EQ(seen.back(), "2m1");
}

TEST(CaseSpace, ChunksAndMicrobatchesOnlyWhereTheyApply) {
  ExhaustBounds b = tiny();
  const CaseUnit unit{vllm::engine(), {2, 1, false, false}, {2, 1}};
  int64_t chunked = 0, micro = 0, total = 0;
  for_each_case(unit, b, [&](const Case& c) {
    ++total;
    if (c.dp_chunk) {
      ++chunked;
      EXPECT_EQ(c.path, Path::local);
      EXPECT_EQ(c.microbatches, 1);
      // C runs to max n_d + 1; the largest n_d is 3 (cudagraph [M+1] with M = 2).
      EXPECT_LE(*c.dp_chunk, 4);
    }
    if (c.microbatches > 1) {
      ++micro;
      EXPECT_EQ(c.padding.mode, PaddingMode::dp_max);
      EXPECT_FALSE(c.dp_chunk.has_value());
    }
    return true;
  });
  EXPECT_GT(chunked, 0);
  EXPECT_GT(micro, 0);
  EXPECT_GT(total, chunked + micro);
}

// Every enumerated case is valid and inside the profile; the sizes of these spaces change only
// when the enumeration does.
int64_t checked_space_size(Profile profile) {
  const ExhaustBounds b{.max_dp = 3, .max_tp = 3, .max_tokens = 4, .max_m = 4, .profile = profile, .engine = vllm::engine()};
  int64_t cases = 0;
  for (const CaseUnit& u : enumerate_units(b)) {
    for_each_case(u, b, [&](const Case& c) {
      ++cases;
      auto status = validate(c);
      EXPECT_TRUE(status.ok()) << status.error().message;
      auto inside = check_profile(c, profile);
      EXPECT_TRUE(inside.ok()) << inside.error().message;
      return status.ok() && inside.ok();
    });
  }
  return cases;
}

TEST(CaseSpace, EveryEnumeratedCaseIsValidAndInsideItsProfile) {
  EXPECT_EQ(checked_space_size(Profile::any()), 178512);
  EXPECT_EQ(checked_space_size(vllm_legacy()), 45442);
  EXPECT_EQ(checked_space_size(kDefaultProfile), 24142);
}

TEST(CaseSpace, VisitStopsWhenAsked) {
  const CaseUnit unit{vllm::engine(), {1, 1, false, false}, {0}};
  int calls = 0;
  EXPECT_EQ(for_each_case(unit, tiny(), [&](const Case&) { return ++calls < 3; }), 3);
}

}  // namespace
}  // namespace r3

namespace r3 {
namespace {

// count_space() counts by (topology, largest token count) instead of listing: it must agree
// with listing every unit and expanding it, on spaces small enough to list.
TEST(CaseSpace, CountingAgreesWithEnumerating) {
  for (const ExhaustBounds& b :
       {tiny(), ExhaustBounds{.max_dp = 3, .max_tp = 3, .max_tokens = 5, .max_m = 4, .profile = Profile::any(), .engine = vllm::engine()},
        ExhaustBounds{.max_dp = 4, .max_tp = 2, .max_tokens = 6, .max_m = 7, .layers = 1, .profile = Profile::any(), .engine = vllm::engine()}}) {
    const std::vector<CaseUnit> units = enumerate_units(b);
    int64_t cases = 0;
    for (const CaseUnit& unit : units) cases += for_each_case(unit, b, [](const Case&) { return true; });
    const SpaceSize size = count_space(b);
    EXPECT_EQ(size.units, static_cast<int64_t>(units.size())) << describe(b);
    EXPECT_EQ(size.cases, cases) << describe(b);
    // A vLLM profile's space is a subset: the count bounds it.
    ExhaustBounds vllm = b;
    vllm.profile = kDefaultProfile;
    int64_t vllm_cases = 0;
    for (const CaseUnit& unit : units) vllm_cases += for_each_case(unit, vllm, [](const Case&) { return true; });
    EXPECT_EQ(count_space(vllm).cases, cases);
    EXPECT_LT(vllm_cases, cases);
  }
}

TEST(CaseSpace, CountingTheLargestBoundsListsNothing) {
  // 2.2 billion units: listing them took 24 GB (issue 15); counting them takes nothing.
  const SpaceSize size = count_space({.max_dp = 8, .max_tp = 8, .max_tokens = 32, .max_m = 32});
  EXPECT_EQ(size.units, 2197609381);
  EXPECT_GT(size.cases, size.units);
}

// SGLang's units are counted as vLLM's are, and a unit's cases from its sizes and knobs
// (its EngineExhaust::count_cases): both agree with listing every unit and visiting every case, under profile
// any (exact) and each SGLang profile (an upper bound), and for both engines at once.
TEST(CaseSpace, CountingSglangsSpaceAgreesWithEnumeratingIt) {
  for (const ExhaustBounds& b :
       {ExhaustBounds{.max_dp = 2, .max_tp = 2, .max_tokens = 3, .max_m = 3, .profile = Profile::any(), .engine = sglang::engine()},
        ExhaustBounds{.max_dp = 3, .max_tp = 1, .max_tokens = 4, .max_m = 2, .layers = 1, .profile = Profile::any(), .engine = sglang::engine()},
        ExhaustBounds{.max_dp = 2, .max_tp = 2, .max_tokens = 2, .max_m = 2, .profile = Profile::any(), .engine = std::nullopt}}) {
    const std::vector<CaseUnit> units = enumerate_units(b);
    int64_t cases = 0;
    for (const CaseUnit& unit : units) cases += for_each_case(unit, b, [](const Case&) { return true; });
    const SpaceSize size = count_space(b);
    EXPECT_EQ(size.units, static_cast<int64_t>(units.size())) << describe(b);
    EXPECT_EQ(size.cases, cases) << describe(b);
    for (Profile p : {sglang_profile(), sglang_miles()}) {
      ExhaustBounds in_profile = b;
      in_profile.profile = p;
      int64_t profile_cases = 0;
      for (const CaseUnit& unit : enumerate_units(in_profile))
        profile_cases += for_each_case(unit, in_profile, [](const Case&) { return true; });
      if (b.engine == sglang::engine()) {
        EXPECT_EQ(count_space(in_profile).cases, cases) << describe(in_profile);
      }
      EXPECT_LT(profile_cases, cases) << describe(in_profile);
    }
  }
}

TEST(CaseSpace, CountingTheLargestSglangBoundsListsNothing) {
  // exhaust --profile sglang at every flag's largest value listed 9.2 billion units and reached
  // 24 GB before its refusal; counting them takes a fraction of a second and nothing that grows.
  const SpaceSize size =
      count_space({.max_dp = 8, .max_tp = 8, .max_tokens = 32, .max_m = 32, .profile = sglang_profile(), .engine = std::nullopt});
  // 8 * 4 * 3 shapes for each of the 8 TP sizes, times the count vectors of each D.
  int64_t vectors = 0;
  for (int dp = 1; dp <= 8; ++dp) vectors += exhaust::count_vectors_up_to(dp, 32, 32);
  EXPECT_EQ(size.units, 8 * 4 * 3 * vectors);
  EXPECT_EQ(size.units, 9172631424);
  EXPECT_GT(size.cases, size.units);
}

}  // namespace
}  // namespace r3
