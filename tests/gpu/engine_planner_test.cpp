// The GPU level's engine parts (gpu/engine_planner.hpp, gpu/engines/registry.cpp): which engines
// plan their own steps, the pipeline refusing a step an engine laid out its own way when the
// engine has no planner, and an engine added at run time whose planner then takes its steps.
#include "gpu/engine_planner.hpp"

#include <gtest/gtest.h>

#include <string>

#include "gpu/detail/plan.hpp"
#include "reference/engine_model.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace r3::gpu {
namespace {

using testing::small_case;
using testing::step_of;

// An engine of nothing but a name: its steps are whatever the test hands the pipeline. No
// profiles and no policies, so the registry's lists other tests read stay as they were.
class ToyModel final : public EngineModel {
 public:
  std::string_view name() const override { return "gpu-planner-toy"; }
  std::span<const ProfileInfo> profiles() const override { return {}; }
  Status validate(const Case&) const override { return ok_status(); }
  Status derive_step_into(Step& s, const Case& c) const override { return derive_base_step_into(s, c); }
  Status check_profile(const Case&, Profile) const override { return ok_status(); }
  Case fit_to_profile(Case c, Profile) const override { return c; }
  std::string summarize(const Case&) const override { return "toy"; }
  int64_t most_buffer_rows(const Case& c) const override { return c.max_num_tokens; }
  bool small_enough_to_materialise(const Case&) const override { return true; }
  std::span<const PolicyInfo> policies() const override { return {}; }
  std::vector<std::string_view> released_policies() const override { return {}; }
  std::string_view fixed_policy() const override { return {}; }
  bool has_fault(Fault) const override { return false; }
  void apply_decision_fault(Fault, const CaptureCall&, CaptureDecision&) const override {}
  void decide_with_fault(const CapturePolicy& base, Fault, const CaptureCall& call, CaptureDecision& out) const override {
    base.decide(call, out);
  }
};

// Registered once per process (the registry keeps it).
Engine toy_engine() {
  static const ToyModel model;
  static const Engine engine = [] {
    const Status added = add_engine(model);
    EXPECT_TRUE(added.ok()) << (added.ok() ? "" : added.error().message);
    return Engine::of(model);
  }();
  return engine;
}

// Counts the steps it is handed, and gives each rank an empty plan.
class CountingPlanner final : public EngineStepPlanner {
 public:
  int capture_images() const override { return 1; }
  void plan_step(const Case&, const Step& step, const detail::PlanSettings&, detail::DevicePlan&,
                 detail::PlannedCase& out) const override {
    ++steps;
    out.ranks.resize(static_cast<size_t>(step.dp) * static_cast<size_t>(step.tp));
  }
  mutable int steps = 0;
};

TEST(GpuEnginePlanner, SglangPlansItsOwnStepsAndVllmTakesTheBasePlanner) {
  EXPECT_EQ(engine_planner(vllm::engine()), nullptr);
  const EngineStepPlanner* own = engine_planner(sglang::engine());
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->capture_images(), 2);  // the device buffer and the published image
}

TEST(GpuEnginePlanner, ABuiltInEnginesPlannerIsFixed) {
  static const CountingPlanner planner;
  for (Engine e : {vllm::engine(), sglang::engine()}) {
    const EngineStepPlanner* before = engine_planner(e);
    const Status added = add_engine_planner(e, planner);
    ASSERT_FALSE(added.ok());
    EXPECT_EQ(added.error().message, "engine " + std::string(e.name()) + ": a built-in engine's GPU planner is fixed");
    EXPECT_EQ(engine_planner(e), before);
  }
}

TEST(GpuEnginePlanner, AStepLaidOutItsOwnWayWithoutAPlannerIsRefusedNamingTheEngine) {
  const Case c = small_case(2, 1, false, 4, {2, 3}, Path::gathered);
  Step step = step_of(c);
  step.engine_step.emplace<int>(1);
  const auto policy = make_vllm_50874_policy();
  detail::DevicePlan plan;
  const auto planned = detail::plan_case(c, step, {policy.get()}, plan);
  ASSERT_FALSE(planned.ok());
  EXPECT_EQ(planned.error().message,
            "gpu: engine vllm lays its steps out its own way but has no GPU step planner (gpu/engine_planner.hpp)");
  const auto out = testing::gpu()->run_concrete(c, step);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message, planned.error().message);
}

TEST(GpuEnginePlanner, AnAddedEnginesPlannerTakesItsSteps) {
  static const CountingPlanner planner;
  const Engine toy = toy_engine();
  ASSERT_TRUE(add_engine_planner(toy, planner).ok());
  EXPECT_EQ(engine_planner(toy), &planner);
  const Case c = small_case(2, 1, false, 4, {2, 3}, Path::gathered);
  Step step = step_of(c);
  step.engine = toy;
  step.engine_step.emplace<int>(1);
  const auto policy = make_vllm_50874_policy();
  detail::DevicePlan plan;
  const int before = planner.steps;
  const auto planned = detail::plan_case(c, step, {policy.get()}, plan);
  ASSERT_TRUE(planned.ok()) << planned.error().message;
  EXPECT_EQ(planner.steps, before + 1);
  EXPECT_EQ(planned->ranks.size(), 2u);
}

}  // namespace
}  // namespace r3::gpu
