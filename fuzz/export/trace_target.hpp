// The engine a trace's exported test runs on (an engine's trace export part): which lifecycle
// classes of the engine the test drives by default, what its harness fakes around them, and the
// engine's own data lines (how each step of the trace reaches those classes). One entry per
// engine that has one (fuzz/engines/NAME/trace_export.cpp), found through the registry's
// FuzzEngineParts::trace_exporter; the shared part of the module (trace_pytest_writer.cpp: the
// requests, the route hash, the truth and the assertions) serves every engine. An engine without
// this part cannot export its traces, and says so.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reference/error.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

struct EngineTraceTarget {
  std::string_view engine;          // the engine's registered name
  std::string_view default_engine;  // MODULE:CLASS of the engine's real lifecycle class
  std::string_view engine_source;   // where that path was read, for the file's docstring
  std::string_view tests_doc;       // the docstring's "What it tests" paragraph
  std::string_view env_doc;         // further environment variables the harness reads ("" if none)
  // The engine's data lines (its steps as its classes see them), after the shared ones; an error
  // naming what the harness cannot drive (a trace feature the engine's part does not fake).
  Result<std::string> (*engine_data)(const Trace& t, const Timeline& timeline);
  // The Python that fakes the engine's world and defines serve(module, cls): it runs the trace's
  // steps and returns what each finished request got (the shared part's outcome tuples).
  std::string_view harness;
};

// The trace export part of `engine`; null when it has none (fuzz/engines/registry.cpp).
const EngineTraceTarget* engine_trace_export(Engine engine);

// The target for `t`, by the trace's engine; an error naming the engine when it has none.
Result<const EngineTraceTarget*> trace_target(const Trace& t);

// Why `r3fuzz export TRACE --pytest` refuses `t` (its engine has no trace export part, or its part
// cannot drive what the trace holds), in the words the export prints; nullopt when it exports.
std::optional<std::string> trace_export_refusal(const Trace& t);

}  // namespace r3
