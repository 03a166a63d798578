#include "fuzz/implementations/registry.hpp"

#include <gtest/gtest.h>

#include "reference/engine_model.hpp"
#include "reference/engines/sglang/fields.hpp"

namespace r3 {
namespace {

TEST(Registry, BuildsEveryPolicyModelByName) {
  for (const char* name : {"vllm-50874", "vllm-pre-50874", "r3-fixed"}) {
    auto impl = make_implementation(name, {});
    ASSERT_TRUE(impl.ok()) << impl.error().message;
    EXPECT_EQ((*impl)->name(), name);
    EXPECT_NE((*impl)->policy(), nullptr);
  }
}

TEST(Registry, UnknownNamesListTheKnownOnes) {
  auto impl = make_implementation("vllm-1", {});
  ASSERT_FALSE(impl.ok());
  EXPECT_EQ(impl.error().message.rfind("--impl vllm-1: unknown implementation; known: vllm-50874, vllm-pre-50874, "
                                       "r3-fixed",
                                       0),
            0u)
      << impl.error().message;
}

TEST(Registry, PolicyModelsRejectOptionsTheyHaveNoUseFor) {
  ImplementationOptions options;
  options.backend = "nccl";
  EXPECT_EQ(make_implementation("r3-fixed", options).error().message,
            "--backend: r3-fixed is a policy model and has no backend");
}

TEST(Registry, BuildsFaultedImplementationsByTheNamesTheyReport) {
  // The names findings, shrunk cases and regression entries carry in "expect.impl".
  for (const char* name : {"r3-fixed+tp-major-order", "vllm-50874+no-trim", "gpu+no-trim", "gpu:r3-fixed+floor-sp"}) {
    auto impl = make_implementation(name, {});
    ASSERT_TRUE(impl.ok()) << name << ": " << impl.error().message;
    EXPECT_EQ((*impl)->name(), name);
  }
  EXPECT_NE((*make_implementation("r3-fixed+no-trim", {}))->policy(), nullptr);
  EXPECT_EQ(make_implementation("r3-fixed+no-such-fault", {}).error().message.rfind(
                "--impl r3-fixed+no-such-fault: fault: \"no-such-fault\" is not one of replay-per-rank, ", 0),
            0u);
}

TEST(Registry, FaultFlagFaultsANameWithoutOne) {
  ImplementationOptions options;
  options.fault = "no-trim";
  for (const char* name : {"vllm-50874", "r3-fixed", "gpu", "gpu:r3-fixed"}) {
    auto impl = make_implementation(name, options);
    ASSERT_TRUE(impl.ok()) << name << ": " << impl.error().message;
    EXPECT_EQ((*impl)->name(), std::string(name) + "+no-trim");
  }
  options.fault = "floor-sp";
  EXPECT_EQ(make_implementation("r3-fixed+no-trim", options).error().message,
            "--impl r3-fixed+no-trim: names a fault already, and --fault gives floor-sp");
  options.fault = "nope";
  EXPECT_EQ(make_implementation("r3-fixed", options).error().message.rfind("--fault: fault: \"nope\" is not one of ", 0),
            0u);
  options.fault = "no-trim";
  EXPECT_EQ(make_implementation("external:true", options).error().message, "--fault: external:true takes no fault");
}

TEST(Registry, DefaultsAreBothVllmModels) {
  EXPECT_EQ(default_implementation_names(), (std::vector<std::string>{"vllm-50874", "vllm-pre-50874"}));
}

// The policy rows are each engine's models (EngineModel::policies()), in registry order, with
// their descriptions; the adapter and the GPU pipeline follow.
TEST(Registry, PolicyRowsAreEachEnginesModelsInRegistryOrder) {
  std::vector<std::string> names;
  size_t row = 0;
  const auto& rows = registered_implementations();
  for (const EngineModel* model : engine_models()) {
    for (const PolicyInfo& policy : model->policies()) {
      ASSERT_LT(row, rows.size());
      EXPECT_EQ(rows[row].name, policy.name);
      EXPECT_EQ(rows[row].summary, policy.description);
      names.emplace_back(rows[row++].name);
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"vllm-50874", "vllm-pre-50874", "r3-fixed", "sglang", "sglang-miles",
                                              "sglang-fixed", "trtllm", "trtllm-06a976ce", "trtllm-fixed", "ascend", "ascend-0.26", "ascend-fixed"}));
  ASSERT_LT(row, rows.size());
  EXPECT_EQ(rows[row].name, "external:");
}

// Each profile's defaults are its engine's released versions; any's every engine's, in registry order.
TEST(Registry, DefaultsAreTheReleasedVersionsOfTheProfilesEngines) {
  EXPECT_EQ(default_implementation_names(Profile::of(sglang::engine(), 1)),
            (std::vector<std::string>{"sglang", "sglang-miles"}));
  EXPECT_EQ(default_implementation_names(Profile::any()),
            (std::vector<std::string>{"vllm-50874", "vllm-pre-50874", "sglang", "sglang-miles", "trtllm", "trtllm-06a976ce", "ascend", "ascend-0.26"}));
}

}  // namespace
}  // namespace r3
