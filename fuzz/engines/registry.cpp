// The fuzz-level registry: one line per engine, in the reference registry's order
// (reference/engines/registry.cpp), and the lookups the generic code calls.
#include "fuzz/engines/registry.hpp"

#include <vector>

#include "fuzz/engines/ascend/parts.hpp"
#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/engines/trtllm/parts.hpp"
#include "fuzz/engines/vllm/parts.hpp"

namespace r3 {
namespace {

std::vector<FuzzEngineParts> builtin_parts() {
  return {
      vllm::fuzz_parts(),
      sglang::fuzz_parts(),
      trtllm::fuzz_parts(),
      ascend::fuzz_parts(),
  };
}

std::vector<FuzzEngineParts>& registry() {
  static std::vector<FuzzEngineParts> parts = builtin_parts();
  return parts;
}

size_t builtin_count() {
  static const size_t count = builtin_parts().size();
  return count;
}

}  // namespace

const FuzzEngineParts& fuzz_parts(Engine engine) {
  static const FuzzEngineParts none;
  const auto& parts = registry();
  return engine.index() < parts.size() ? parts[engine.index()] : none;
}

Status add_engine_parts(Engine engine, const FuzzEngineParts& parts) {
  auto& all = registry();
  if (engine.index() < builtin_count())
    return Error{"engine " + std::string(engine.name()) + ": a built-in engine's parts are fixed"};
  if (all.size() <= engine.index()) all.resize(engine.index() + 1);
  all[engine.index()] = parts;
  return ok_status();
}

// The lookups the generic code calls, each declared beside its part's interface.
const EngineCodec* engine_codec(Engine engine) { return fuzz_parts(engine).codec; }
const EngineDraw* engine_draw(Engine engine) { return fuzz_parts(engine).draw; }
const EngineShrink* engine_shrink(Engine engine) { return fuzz_parts(engine).shrink; }
const EngineExhaust* engine_exhaust(Engine engine) { return fuzz_parts(engine).exhaust; }
const EngineExplain* engine_explain(Engine engine) { return fuzz_parts(engine).explain; }
const EngineTarget* engine_export(Engine engine) { return fuzz_parts(engine).exporter; }
const EngineAdapter* engine_adapter(Engine engine) { return fuzz_parts(engine).adapter; }
const EngineSeed* engine_seed(Engine engine) { return fuzz_parts(engine).seed; }
const EngineTraceDraw* engine_trace_draw(Engine engine) { return fuzz_parts(engine).trace_draw; }
const EngineTraceTarget* engine_trace_export(Engine engine) { return fuzz_parts(engine).trace_exporter; }

}  // namespace r3
