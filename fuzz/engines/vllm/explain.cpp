// The vLLM engine's explain part (fuzz/cli/engine_explain.hpp): a vLLM case is the case format's
// base case, so its explanation is the generic layout report of fuzz/cli/explain.cpp (ranks, SP
// shards, padding, gathered segments, calls), which lists nothing of the engine's own.
#include <optional>

#include "fuzz/cli/engine_explain.hpp"
#include "fuzz/cli/explain.hpp"
#include "fuzz/engines/vllm/parts.hpp"

namespace r3::vllm {
namespace {

class VllmExplain final : public EngineExplain {
 public:
  nlohmann::ordered_json json(const Explanation& e) const override { return layout_explanation_json(e); }
  std::string text(const Explanation& e) const override { return layout_explanation_text(e); }
  std::optional<int64_t> written_runs(const Step&) const override { return std::nullopt; }
  int64_t published_copies(const Explanation&) const override { return 0; }
};

}  // namespace

const EngineExplain& explain_part() {
  static const VllmExplain part;
  return part;
}

}  // namespace r3::vllm
