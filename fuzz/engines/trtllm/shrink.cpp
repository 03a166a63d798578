// The trtllm engine's shrink part (fuzz/shrink/engine_shrink.hpp): its per-step cases are the base
// case, so the shrinker runs the base passes (fuzz/shrink/passes.hpp) and its key holds nothing more.
#include <vector>

#include "fuzz/engines/trtllm/parts.hpp"
#include "fuzz/shrink/engine_shrink.hpp"
#include "fuzz/shrink/passes.hpp"

namespace r3::trtllm {
namespace {

class Shrink final : public EngineShrink {
 public:
  void append_passes(std::vector<ShrinkPass>& passes, bool allow_path_change) const override {
    append_base_passes(passes, allow_path_change);
  }
};

}  // namespace

const EngineShrink& shrink_part() {
  static const Shrink part;
  return part;
}

}  // namespace r3::trtllm
