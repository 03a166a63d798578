// vllm-ascend's deployments as seeds (deployment.hpp). Its steps' rows depend on the comm type,
// which a vLLM metadata log does not record, so its deployments seed from their traffic only.
#include "fuzz/engines/ascend/deployment.hpp"
#include "fuzz/engines/ascend/parts.hpp"
#include "fuzz/seed/engine_seed.hpp"

namespace r3::ascend {
namespace {

constexpr std::string_view kLogRefusal =
    "a metadata log records vLLM's DP metadata, not the comm type that places an Ascend step's rows; an ascend "
    "deployment seeds from its traffic only";

class Seed final : public TrafficOnlySeed {
 public:
  Seed() : TrafficOnlySeed(kLogRefusal) {}
  Status read_deployment(const nlohmann::json& doc, Deployment& d) const override { return read_ascend_deployment(doc, d); }
  Case base_case(const Deployment& d) const override { return ascend_deployment_case(d); }
  TrafficSize traffic_size(const Deployment& d) const override { return ascend_traffic_size(d); }
  void generate_traffic(const Deployment& d, const std::function<bool(Case)>& emit) const override {
    generate_ascend_traffic(d, emit);
  }
};

}  // namespace

const EngineSeed& seed_part() {
  static const Seed part;
  return part;
}

}  // namespace r3::ascend
