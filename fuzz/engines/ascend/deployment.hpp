// A vllm-ascend deployment description (format "r3fuzz-deployment/1", "engine": "ascend";
// docs/FUZZING.md, "vllm-ascend deployments"): a vLLM deployment (topology, model,
// max_num_tokens, cudagraph, traffic: vllm/deployment.hpp, which reads and generates it) plus the
// plugin's "ascend" object as an Ascend case has it (chip, runner, graph, lora, fused_mc2,
// mega_moe, mc2_tokens). Every case it seeds is the vLLM traffic's step with those fields: its
// decode steps, padded to a capture size, run the deployment's ACL graph mode; its prefill steps
// run eager.
#pragma once

#include <functional>

#include <nlohmann/json_fwd.hpp>

#include "fuzz/engines/vllm/deployment.hpp"
#include "fuzz/seed/seed.hpp"
#include "fuzz/seed/traffic.hpp"
#include "reference/case.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/error.hpp"

namespace r3::ascend {

// What an Ascend deployment holds beyond its name and note (Deployment::fields): the vLLM
// deployment it is (read and turned into traffic by vLLM's seed code, unchanged) and the plugin's
// fields.
struct AscendDeployment {
  VllmDeployment vllm;
  Fields fields;
  bool operator==(const AscendDeployment&) const = default;
};

// Reads every key of `doc` into `d`; the errors name the key ("ascend.graph: ...").
Status read_ascend_deployment(const nlohmann::json& doc, Deployment& d);

// The base case (tokens all zero, last layer, the deployment's note).
Case ascend_deployment_case(const Deployment& d);
TrafficSize ascend_traffic_size(const Deployment& d);
// vLLM's traffic (decode steps at the capture sizes and their neighbours, prefill steps at each
// length) as Ascend steps, each handed to `emit` until it returns false; none validated here.
void generate_ascend_traffic(const Deployment& d, const std::function<bool(Case)>& emit);

}  // namespace r3::ascend
