// The trtllm engine's parts at the fuzz level (fuzz/engines/registry.hpp): its case codec and
// shrink (its per-step cases are the base case's), its trace part and its trace export part. It
// has no case draw, exhaust, explain, case export, adapter or seed part yet.
#pragma once

#include "fuzz/engines/registry.hpp"

namespace r3::trtllm {

const EngineCodec& codec_part();           // fuzz/engines/trtllm/codec.cpp
const EngineShrink& shrink_part();         // fuzz/engines/trtllm/shrink.cpp
const EngineTraceDraw& trace_draw_part();  // fuzz/engines/trtllm/trace_draw.cpp
const EngineTraceTarget& trace_export_part();  // fuzz/engines/trtllm/trace_export.cpp

inline FuzzEngineParts fuzz_parts() {
  FuzzEngineParts parts;
  parts.codec = &codec_part();
  parts.shrink = &shrink_part();
  parts.trace_draw = &trace_draw_part();
  parts.trace_exporter = &trace_export_part();
  return parts;
}

}  // namespace r3::trtllm
