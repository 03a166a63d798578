// The ascend engine's parts at the fuzz level, one per generic concern (fuzz/engines/registry.hpp).
// It has no adapter, seed or trace part yet.
#pragma once

#include "fuzz/engines/registry.hpp"

namespace r3::ascend {

const EngineAdapter& adapter_part();  // fuzz/engines/ascend/adapter.cpp
const EngineCodec& codec_part();      // fuzz/engines/ascend/codec.cpp
const EngineDraw& draw_part();        // fuzz/engines/ascend/draw.cpp
const EngineShrink& shrink_part();    // fuzz/engines/ascend/shrink.cpp
const EngineExhaust& exhaust_part();  // fuzz/engines/ascend/exhaust.cpp
const EngineExplain& explain_part();  // fuzz/engines/ascend/explain.cpp
const EngineTarget& export_part();    // fuzz/engines/ascend/export.cpp
const EngineSeed& seed_part();        // fuzz/engines/ascend/seed.cpp

inline FuzzEngineParts fuzz_parts() {
  FuzzEngineParts parts;
  parts.adapter = &adapter_part();
  parts.codec = &codec_part();
  parts.draw = &draw_part();
  parts.shrink = &shrink_part();
  parts.exhaust = &exhaust_part();
  parts.explain = &explain_part();
  parts.exporter = &export_part();
  parts.seed = &seed_part();
  return parts;
}

}  // namespace r3::ascend
