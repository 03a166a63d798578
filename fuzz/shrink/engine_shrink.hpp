// What the shrinker (shrink.hpp) asks of an engine: the passes that reduce its cases, and its own
// fields in the key that caches verdicts (case_key.hpp). The shrinker runs the passes of the
// failing case's engine, found through engine_shrink(); each engine implements them in
// fuzz/engines/NAME/shrink.cpp (docs/ENGINES.md), building on the shared passes of passes.hpp.
#pragma once

#include <vector>

#include "fuzz/shrink/case_key.hpp"
#include "fuzz/shrink/passes.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"

namespace r3 {

class EngineShrink {
 public:
  virtual ~EngineShrink() = default;

  // Appends the passes for the engine's cases in the order that helps a reader most; a pass
  // that changes what the signature names (the path, the capture layout) only when
  // allow_path_change. Together they reduce every part of the case domain the engine draws.
  virtual void append_passes(std::vector<ShrinkPass>& passes, bool allow_path_change) const = 0;
  // Appends the engine's own fields of `c` (those the case format does not hold) to its key.
  virtual void append_key(const Case& c, CaseKey& key) const {
    (void)c;
    (void)key;
  }
};

// The shrink part of an engine whose cases are the base case (vLLM's, TensorRT-LLM's): the base
// passes, and a key that holds nothing more.
class BaseCaseShrink final : public EngineShrink {
 public:
  void append_passes(std::vector<ShrinkPass>& passes, bool allow_path_change) const override {
    append_base_passes(passes, allow_path_change);
  }
};

// The engine's shrink part (fuzz/engines/registry.cpp); null for an engine without one.
const EngineShrink* engine_shrink(Engine engine);

}  // namespace r3
