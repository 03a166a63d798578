// vllm-ascend's steps with an external adapter: the base protocol's capture requests, one per
// capture call and rank (an Ascend step is a vLLM-family step: DP metadata, the rows a TP rank
// holds after moe_comm_method.prepare, what the TP all-gather returns there), each with what the
// plugin's patched capture reads besides (patch/worker/patch_routed_experts_capture.py, capture, at
// main 182b75ea): the step's comm type, as _EXTRA_CTX.moe_comm_type holds it
// (ascend_forward_context.py, MoECommType). The rank's own count and whether SP is on come along
// for a fixed capture, which needs them where DP = 1 leaves no DP metadata (docs/adapter-protocol.md,
// "vllm-ascend steps").
#include <string>
#include <utility>

#include "fuzz/adapter/engine_adapter.hpp"
#include "fuzz/engines/ascend/parts.hpp"
#include "reference/engines/ascend/layout.hpp"

namespace r3::ascend {
namespace {

class Adapter final : public CaptureRequestAdapter {
 public:
  Result<ConcreteOutcome> exchange_step(AdapterChannel& channel, const Case& c, const Step& step) const override {
    const StepFields* sf = step_fields_of(step);
    if (!sf) return channel.fail("an Ascend step without its forward context (a bug in r3fuzz's layout)");
    const RequestContext context = [sf](const RankView& view) {
      return nlohmann::json{{"ascend",
                             {{"moe_comm_type", comm_type_member(sf->comm)},
                              {"sp", sf->sp},
                              {"num_tokens", sf->counts.at(static_cast<size_t>(view.dp))}}}};
    };
    return channel.exchange_capture_requests(c, step, &context);
  }
};

}  // namespace

const EngineAdapter& adapter_part() {
  static const Adapter part;
  return part;
}

}  // namespace r3::ascend
