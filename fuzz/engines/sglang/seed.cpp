// SGLang's deployments as seeds (deployment.hpp). SGLang has no per-step record of its DP
// metadata to replay, so its deployments seed from their traffic only.
#include <utility>

#include "fuzz/engines/sglang/deployment.hpp"
#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/seed/engine_seed.hpp"
#include "fuzz/seed/seed.hpp"

namespace r3::sglang {
namespace {

constexpr std::string_view kLogRefusal =
    "metadata logs are vLLM's (num_tokens_across_dp, local_sizes); an SGLang deployment seeds from its traffic only";

class Seed final : public TrafficOnlySeed {
 public:
  Seed() : TrafficOnlySeed(kLogRefusal) {}
  Status read_deployment(const nlohmann::json& doc, Deployment& d) const override {
    R3_TRY_STATUS(read_deployment_labels(doc, d));
    R3_TRY(SglangDeployment fields, sglang_deployment_from_json(doc));
    d.fields.emplace(std::move(fields));
    return ok_status();
  }
  Case base_case(const Deployment& d) const override {
    const SglangDeployment* s = d.fields.get<SglangDeployment>();
    Case c = s ? s->base : Case{};
    c.note = d.note;
    return c;
  }
  TrafficSize traffic_size(const Deployment& d) const override {
    const SglangDeployment* s = d.fields.get<SglangDeployment>();
    return s ? sglang_traffic_size(*s) : TrafficSize{};
  }
  // The deployment's note goes into each case as it is made: it is not held in the base case.
  void generate_traffic(const Deployment& d, const std::function<bool(Case)>& emit) const override {
    const SglangDeployment* s = d.fields.get<SglangDeployment>();
    if (!s) return;
    generate_sglang_traffic(*s, [&](Case c) {
      c.note = d.note;
      return emit(std::move(c));
    });
  }
};

}  // namespace

const EngineSeed& seed_part() {
  static const Seed part;
  return part;
}

}  // namespace r3::sglang
