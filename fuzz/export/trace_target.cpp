#include "fuzz/export/trace_target.hpp"

namespace r3 {

Result<const EngineTraceTarget*> trace_target(const Trace& t) {
  if (const EngineTraceTarget* target = engine_trace_export(t.engine)) return target;
  return Error{"engine " + std::string(t.engine.name()) +
               ": r3fuzz cannot export its traces (the engine has no trace export part)"};
}

}  // namespace r3
