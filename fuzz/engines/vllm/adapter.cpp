// vLLM's steps with an external adapter: the base protocol's capture requests, one per capture
// call and rank (fuzz/adapter/protocol.hpp, batch.hpp), as vLLM's capturer is called.
#include <utility>

#include "fuzz/adapter/engine_adapter.hpp"
#include "fuzz/engines/vllm/parts.hpp"

namespace r3::vllm {
namespace {

class Adapter final : public CaptureRequestAdapter {
 public:
  Result<ConcreteOutcome> exchange_step(AdapterChannel& channel, const Case& c, const Step& step) const override {
    return channel.exchange_capture_requests(c, step, nullptr);
  }
};

}  // namespace

const EngineAdapter& adapter_part() {
  static const Adapter part;
  return part;
}

}  // namespace r3::vllm
