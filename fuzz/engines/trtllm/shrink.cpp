// The trtllm engine's shrink part (fuzz/shrink/engine_shrink.hpp): its per-step cases are the base case on one rank,
// so the shrinker runs the base passes on them (BaseCaseShrink).
#include "fuzz/engines/trtllm/parts.hpp"
#include "fuzz/shrink/engine_shrink.hpp"

namespace r3::trtllm {

const EngineShrink& shrink_part() {
  static const BaseCaseShrink part;
  return part;
}

}  // namespace r3::trtllm
