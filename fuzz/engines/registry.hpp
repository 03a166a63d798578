// The engines' parts at the fuzz level: for each registered engine (reference/engine.hpp), what
// the generic harness asks of it to read and write its cases, draw, shrink and enumerate them,
// explain and export their steps, talk to adapters about them and seed them from deployments.
// Each part's interface lives beside the generic code that uses it (fuzz/codec/engine_codec.hpp,
// ...), which finds an engine's part through the lookup declared there; the parts themselves
// live in fuzz/engines/NAME/. docs/ENGINES.md has the recipe.
#pragma once

#include "reference/engine.hpp"
#include "reference/error.hpp"

namespace r3 {

class EngineCodec;    // fuzz/codec/engine_codec.hpp
class EngineDraw;     // fuzz/generate/engine_draw.hpp
class EngineShrink;   // fuzz/shrink/engine_shrink.hpp
class EngineExhaust;  // fuzz/exhaust/engine_exhaust.hpp
class EngineExplain;  // fuzz/cli/engine_explain.hpp
struct EngineTarget;  // fuzz/export/engine_target.hpp
class EngineAdapter;  // fuzz/adapter/engine_adapter.hpp
class EngineSeed;     // fuzz/seed/engine_seed.hpp
class EngineTraceDraw;  // fuzz/generate/engine_trace_draw.hpp
struct EngineTraceTarget;  // fuzz/export/trace_target.hpp

// An engine's parts; a null part is one the engine does not have (the command that needs it
// then says so, naming the engine).
struct FuzzEngineParts {
  const EngineCodec* codec = nullptr;
  const EngineDraw* draw = nullptr;
  const EngineShrink* shrink = nullptr;
  const EngineExhaust* exhaust = nullptr;
  const EngineExplain* explain = nullptr;
  const EngineTarget* exporter = nullptr;
  const EngineAdapter* adapter = nullptr;
  const EngineSeed* seed = nullptr;
  const EngineTraceDraw* trace_draw = nullptr;
  const EngineTraceTarget* trace_exporter = nullptr;
};

// The parts of `engine`: the built-in engines' from fuzz/engines/registry.cpp, an added
// engine's from add_engine_parts (none until then).
const FuzzEngineParts& fuzz_parts(Engine engine);

// Gives an engine registered with add_engine (reference/engine.hpp) its fuzz-level parts,
// which must outlive every use of r3fuzz. An error for a built-in engine.
Status add_engine_parts(Engine engine, const FuzzEngineParts& parts);

}  // namespace r3
