#include "fuzz/mutants/carrier.hpp"

#include <gtest/gtest.h>

#include "fuzz/implementations/registry.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"

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

// The historical carrier is vLLM's (EngineExhaust::historical_carriers); no other name is one.
TEST(Carrier, HistoricalCarriersAreFoundByName) {
  const auto h = historical_carrier("vllm-pre-50874");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->fault, Fault::replay_per_rank);
  EXPECT_EQ(h->mutant, "vllm-pre-50874");
  EXPECT_EQ(h->base, "vllm-50874");
  EXPECT_FALSE(historical_carrier("r3-fixed").has_value());
  EXPECT_FALSE(historical_carrier("sglang-fixed").has_value());
}

// Each engine's carriers, in registry order: the matrix's rows keep their order.
TEST(Carrier, DefaultCarriersAreEachEnginesInRegistryOrder) {
  EXPECT_EQ(default_carriers(),
            (std::vector<std::string>{"r3-fixed", "vllm-pre-50874", "gpu", "sglang-fixed", "gpu:sglang-fixed", "ascend-fixed"}));
}

TEST(Carrier, ACarrierIsHuntedOnTheFirstEngineItServes) {
  auto r3_fixed = make_implementation("r3-fixed", {});
  auto sglang_fixed = make_implementation("sglang-fixed", {});
  ASSERT_TRUE(r3_fixed.ok() && sglang_fixed.ok());
  EXPECT_EQ(carrier_engine(**r3_fixed), vllm::engine());
  EXPECT_EQ(carrier_engine(**sglang_fixed), sglang::engine());
}

TEST(Carrier, UnknownCarrierIsAnError) {
  auto m = make_mutant("nope", Fault::no_trim);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("--impl nope+no-trim: unknown implementation"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace r3
