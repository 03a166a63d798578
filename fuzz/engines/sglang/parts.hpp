// The sglang engine's parts at the fuzz level, one per generic concern (fuzz/engines/registry.hpp).
#pragma once

#include "fuzz/engines/registry.hpp"

namespace r3::sglang {

const EngineCodec& codec_part();      // fuzz/engines/sglang/codec.cpp
const EngineDraw& draw_part();        // fuzz/engines/sglang/draw.cpp
const EngineShrink& shrink_part();    // fuzz/engines/sglang/shrink.cpp
const EngineExhaust& exhaust_part();  // fuzz/engines/sglang/exhaust.cpp
const EngineExplain& explain_part();  // fuzz/engines/sglang/explain.cpp
const EngineTarget& export_part();    // fuzz/engines/sglang/export.cpp
const EngineAdapter& adapter_part();  // fuzz/engines/sglang/adapter.cpp
const EngineSeed& seed_part();        // fuzz/engines/sglang/seed.cpp
const EngineTraceDraw& trace_draw_part();  // fuzz/engines/sglang/trace_draw.cpp
const EngineTraceTarget& trace_export_part();  // fuzz/engines/sglang/trace_export.cpp

inline FuzzEngineParts fuzz_parts() {
  return {&codec_part(), &draw_part(), &shrink_part(), &exhaust_part(), &explain_part(), &export_part(), &adapter_part(), &seed_part(),
          &trace_draw_part(), &trace_export_part()};
}

}  // namespace r3::sglang
