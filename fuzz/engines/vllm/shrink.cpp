// The vllm engine's shrink part (fuzz/shrink/engine_shrink.hpp): a vLLM case is the case format's own fields,
// so the shrinker runs the base passes on them (BaseCaseShrink).
#include "fuzz/engines/vllm/parts.hpp"
#include "fuzz/shrink/engine_shrink.hpp"

namespace r3::vllm {

const EngineShrink& shrink_part() {
  static const BaseCaseShrink part;
  return part;
}

}  // namespace r3::vllm
