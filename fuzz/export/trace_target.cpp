#include "fuzz/export/trace_target.hpp"

#include "reference/trace/lifecycle.hpp"

namespace r3 {

Result<const EngineTraceTarget*> trace_target(const Trace& t) {
  if (const EngineTraceTarget* target = engine_trace_export(t.engine)) return target;
  return Error{"engine " + std::string(t.engine.name()) +
               ": r3fuzz cannot export its traces (the engine has no trace export part)"};
}

std::optional<std::string> trace_export_refusal(const Trace& t) {
  const Result<const EngineTraceTarget*> target = trace_target(t);
  if (!target) return target.error().message;
  const Result<Timeline> timeline = validate_trace(t);
  if (!timeline) return timeline.error().message;
  const Result<std::string> data = (*target)->engine_data(t, *timeline);
  if (!data) return data.error().message;
  return std::nullopt;
}

}  // namespace r3
