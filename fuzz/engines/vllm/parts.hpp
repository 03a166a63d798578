// The vllm engine's parts at the fuzz level, one per generic concern (fuzz/engines/registry.hpp).
#pragma once

#include "fuzz/engines/registry.hpp"

namespace r3::vllm {

const EngineCodec& codec_part();      // fuzz/engines/vllm/codec.cpp
const EngineDraw& draw_part();        // fuzz/engines/vllm/draw.cpp
const EngineShrink& shrink_part();    // fuzz/engines/vllm/shrink.cpp
const EngineExhaust& exhaust_part();  // fuzz/engines/vllm/exhaust.cpp
const EngineExplain& explain_part();  // fuzz/engines/vllm/explain.cpp
const EngineTarget& export_part();    // fuzz/engines/vllm/export.cpp
const EngineAdapter& adapter_part();  // fuzz/engines/vllm/adapter.cpp
const EngineSeed& seed_part();        // fuzz/engines/vllm/seed.cpp
const EngineTraceDraw& trace_draw_part();  // fuzz/engines/vllm/trace_draw.cpp
const EngineTraceTarget& trace_export_part();  // fuzz/engines/vllm/trace_export.cpp

inline FuzzEngineParts fuzz_parts() {
  FuzzEngineParts parts{&codec_part(), &draw_part(), &shrink_part(), &exhaust_part(), &explain_part(),
                        &export_part(), &adapter_part(), &seed_part(), &trace_draw_part()};
  parts.trace_exporter = &trace_export_part();
  return parts;
}

}  // namespace r3::vllm
