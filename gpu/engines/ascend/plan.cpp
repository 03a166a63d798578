#include "gpu/engines/ascend/plan.hpp"

#include "gpu/detail/plan.hpp"

namespace r3::ascend {
namespace {

class Planner final : public gpu::EngineStepPlanner {
 public:
  int capture_images() const override { return 1; }
  void plan_step(const Case& c, const Step& step, const gpu::detail::PlanSettings& settings, gpu::detail::DevicePlan& plan,
                 gpu::detail::PlannedCase& out) const override {
    gpu::detail::plan_base_step(c, step, settings, plan, out);
  }
};

}  // namespace

const gpu::EngineStepPlanner& gpu_step_planner() {
  static const Planner planner;
  return planner;
}

}  // namespace r3::ascend
