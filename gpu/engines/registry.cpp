// The GPU-level registry: one line per built-in engine, naming its step planner (null: the base
// planner of gpu/detail/plan.cpp lays its steps out), and the lookup the generic pipeline calls.
#include <string>
#include <vector>

#include "gpu/engine_planner.hpp"
#include "gpu/engines/ascend/plan.hpp"
#include "gpu/engines/sglang/plan.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/engines/vllm/model.hpp"

namespace r3::gpu {
namespace {

struct Entry {
  Engine engine;
  const EngineStepPlanner* planner = nullptr;
};

std::vector<Entry> builtin_planners() {
  return {
      {vllm::engine(), nullptr},
      {sglang::engine(), &sglang::gpu_step_planner()},
      {trtllm::engine(), nullptr},
      {ascend::engine(), &ascend::gpu_step_planner()},
  };
}

// Per engine index: its planner (null past the end, or for an engine without one).
std::vector<const EngineStepPlanner*>& registry() {
  static std::vector<const EngineStepPlanner*> planners = [] {
    std::vector<const EngineStepPlanner*> out;
    for (const Entry& e : builtin_planners()) {
      if (out.size() <= e.engine.index()) out.resize(e.engine.index() + 1);
      out[e.engine.index()] = e.planner;
    }
    return out;
  }();
  return planners;
}

bool builtin(Engine engine) {
  for (const Entry& e : builtin_planners())
    if (e.engine == engine) return true;
  return false;
}

}  // namespace

const EngineStepPlanner* engine_planner(Engine engine) {
  const auto& planners = registry();
  return engine.index() < planners.size() ? planners[engine.index()] : nullptr;
}

Status add_engine_planner(Engine engine, const EngineStepPlanner& planner) {
  if (builtin(engine)) return Error{"engine " + std::string(engine.name()) + ": a built-in engine's GPU planner is fixed"};
  auto& planners = registry();
  if (planners.size() <= engine.index()) planners.resize(engine.index() + 1);
  planners[engine.index()] = &planner;
  return ok_status();
}

}  // namespace r3::gpu
