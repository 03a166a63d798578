// vLLM's deployments and metadata logs as seeds (deployment.hpp).
#include "fuzz/engines/vllm/deployment.hpp"
#include "fuzz/engines/vllm/parts.hpp"
#include "fuzz/seed/engine_seed.hpp"

namespace r3::vllm {
namespace {

class Seed final : public EngineSeed {
 public:
  Status read_deployment(const nlohmann::json& doc, Deployment& d) const override {
    return read_vllm_deployment(doc, d);
  }
  Case base_case(const Deployment& d) const override { return vllm_deployment_case(d); }
  TrafficSize traffic_size(const Deployment& d) const override { return vllm_traffic_size(vllm_deployment_of(d)); }
  void generate_traffic(const Deployment& d, const std::function<bool(Case)>& emit) const override {
    generate_vllm_traffic(d, emit);
  }
  std::string_view log_refusal() const override { return ""; }
  Result<Case> log_case(const Deployment& d, std::string_view line) const override { return vllm_log_case(d, line); }
};

}  // namespace

const EngineSeed& seed_part() {
  static const Seed part;
  return part;
}

}  // namespace r3::vllm
