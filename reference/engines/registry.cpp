// The engine registry: one line per engine, the default first (a case file without "engine" is
// the first engine's). Adding an engine is its folders, a line here and at each level it has
// parts at (gpu/engines/registry.cpp, fuzz/engines/registry.cpp), its tests, corpus and docs:
// docs/ENGINES.md.
#include <vector>

#include "reference/engine_model.hpp"
#include "reference/engines/ascend/model.hpp"
#include "reference/engines/sglang/model.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/engines/vllm/model.hpp"

namespace r3 {

std::vector<const EngineModel*> builtin_engine_models() {
  return {
      &vllm::model(),
      &sglang::model(),
      &trtllm::model(),
      &ascend::model(),
  };
}

}  // namespace r3
