#include "fuzz/export/trace_target.hpp"

#include "fuzz/engines/registry.hpp"

namespace r3 {

// The registry's slot, read here rather than through a lookup in fuzz/engines/registry.cpp, so
// that adding the part touched only the FuzzEngineParts struct.
const EngineTraceTarget* engine_trace_export(Engine engine) { return fuzz_parts(engine).trace_exporter; }

Result<const EngineTraceTarget*> trace_target(const Trace& t) {
  if (const EngineTraceTarget* target = engine_trace_export(t.engine)) return target;
  return Error{"engine " + std::string(t.engine.name()) +
               ": r3fuzz cannot export its traces (the engine has no trace export part)"};
}

}  // namespace r3
