// An engine's part at the GPU level: how the pipeline lays out a step whose engine derived its
// own layout (Step::engine_step), where the base planner (gpu/detail/plan.cpp) lays out the
// case format's own calls. Each engine with such steps implements one in gpu/engines/NAME/ and
// registers it in one line of gpu/engines/registry.cpp; the generic pipeline reaches it through
// engine_planner() and never names an engine (docs/ENGINES.md).
#pragma once

#include "gpu/detail/device_plan.hpp"
#include "gpu/detail/plan.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/layout.hpp"

namespace r3::gpu {

class EngineStepPlanner {
 public:
  virtual ~EngineStepPlanner() = default;

  // Guarded images of the capture buffer's rows each rank holds for one step: the memory bound
  // (gpu/detail/plan.cpp) counts them before anything is planned.
  virtual int capture_images() const = 0;
  // Fills `out` (its allocation already set) and appends the step's device work to `plan`.
  virtual void plan_step(const Case& c, const Step& step, const detail::PlanSettings& settings,
                         detail::DevicePlan& plan, detail::PlannedCase& out) const = 0;
};

// The planner of `engine`'s steps: a built-in engine's from gpu/engines/registry.cpp, an added
// engine's from add_engine_planner. Null for an engine the base planner serves; the pipeline then
// refuses a step that carries the engine's own layout, naming the engine.
const EngineStepPlanner* engine_planner(Engine engine);

// Gives an engine registered with add_engine (reference/engine.hpp) its GPU step planner, which
// must outlive every use of r3fuzz. An error for a built-in engine.
Status add_engine_planner(Engine engine, const EngineStepPlanner& planner);

}  // namespace r3::gpu
