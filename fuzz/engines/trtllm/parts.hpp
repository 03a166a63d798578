// The trtllm engine's parts at the fuzz level (fuzz/engines/registry.hpp): its case codec, draw,
// shrink, exhaust and seed (its per-step cases are the base case on one rank), its trace part and
// its trace export part. It has no per-step export or adapter part yet: those commands refuse a
// trtllm case by name.
#pragma once

#include "fuzz/engines/registry.hpp"

namespace r3::trtllm {

const EngineCodec& codec_part();           // fuzz/engines/trtllm/codec.cpp
const EngineDraw& draw_part();             // fuzz/engines/trtllm/draw.cpp
const EngineExhaust& exhaust_part();       // fuzz/engines/trtllm/exhaust.cpp
const EngineSeed& seed_part();             // fuzz/engines/trtllm/seed.cpp
const EngineShrink& shrink_part();         // fuzz/engines/trtllm/shrink.cpp
const EngineTraceDraw& trace_draw_part();  // fuzz/engines/trtllm/trace_draw.cpp
const EngineTraceTarget& trace_export_part();  // fuzz/engines/trtllm/trace_export.cpp

inline FuzzEngineParts fuzz_parts() {
  FuzzEngineParts parts;
  parts.codec = &codec_part();
  parts.draw = &draw_part();
  parts.shrink = &shrink_part();
  parts.exhaust = &exhaust_part();
  parts.seed = &seed_part();
  parts.trace_draw = &trace_draw_part();
  parts.trace_exporter = &trace_export_part();
  return parts;
}

}  // namespace r3::trtllm
