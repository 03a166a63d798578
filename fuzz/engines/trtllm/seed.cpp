// TensorRT-LLM's deployments as seeds (deployment.hpp); it has no metadata log to seed from.
#include "fuzz/engines/trtllm/deployment.hpp"
#include "fuzz/engines/trtllm/parts.hpp"
#include "fuzz/seed/engine_seed.hpp"

namespace r3::trtllm {
namespace {

class Seed final : public TrafficOnlySeed {
 public:
  Seed() : TrafficOnlySeed("a TensorRT-LLM deployment runs one rank (profile trtllm): there is no DP metadata to log") {}
  Status read_deployment(const nlohmann::json& doc, Deployment& d) const override { return read_trtllm_deployment(doc, d); }
  Case base_case(const Deployment& d) const override { return trtllm_deployment_case(d); }
  TrafficSize traffic_size(const Deployment& d) const override { return trtllm_traffic_size(trtllm_deployment_of(d)); }
  void generate_traffic(const Deployment& d, const std::function<bool(Case)>& emit) const override {
    generate_trtllm_traffic(d, emit);
  }
};

}  // namespace

const EngineSeed& seed_part() {
  static const Seed part;
  return part;
}

}  // namespace r3::trtllm
