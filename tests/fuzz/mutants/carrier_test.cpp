#include "fuzz/mutants/carrier.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(Carrier, PolicyModelsCarryFaultsUnderTheirOwnName) {
  auto m = make_mutant("r3-fixed", Fault::no_trim);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->mutant->name(), "r3-fixed+no-trim");
  EXPECT_EQ(m->base->name(), "r3-fixed");
  EXPECT_NE(m->mutant->policy(), nullptr);
  EXPECT_FALSE(m->concrete);
}

TEST(Carrier, ValueFaultsAreJudgedConcretely) {
  auto m = make_mutant("r3-fixed", Fault::narrow_int16);
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->concrete);
}

TEST(Carrier, HistoricalCarrierIsVllmBeforeAgainstAfter) {
  auto m = make_mutant("vllm-pre-50874", Fault::replay_per_rank);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->mutant->name(), "vllm-pre-50874");
  EXPECT_EQ(m->base->name(), "vllm-50874");
  EXPECT_EQ(make_mutant("vllm-pre-50874", Fault::no_trim).error().message,
            "carrier vllm-pre-50874 carries only replay-per-rank (it is that fault, historically)");
}

TEST(Carrier, UnknownCarrierIsAnError) {
  auto m = make_mutant("nope", Fault::no_trim);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("--impl nope+no-trim: unknown implementation"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace r3
