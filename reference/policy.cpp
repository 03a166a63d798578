#include "reference/policy.hpp"

#include "reference/engine_model.hpp"

namespace r3 {

std::unique_ptr<CapturePolicy> make_policy(std::string_view name) {
  for (const EngineModel* engine : engine_models())
    for (const PolicyInfo& p : engine->policies())
      if (p.name == name) return p.make();
  return nullptr;
}

std::string policy_names() {
  std::string names;
  for (const EngineModel* engine : engine_models())
    for (const PolicyInfo& p : engine->policies()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

}  // namespace r3
