#include "fuzz/engines/ascend/deployment.hpp"

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "fuzz/engines/ascend/codec.hpp"
#include "reference/validate.hpp"

namespace r3::ascend {
namespace {

using json = nlohmann::json;

const AscendDeployment* ascend_deployment_of(const Deployment& d) { return d.fields.get<AscendDeployment>(); }

// `d` as the vLLM deployment it is, for vLLM's seed code.
Deployment as_vllm(const Deployment& d, const AscendDeployment& a) {
  Deployment v = d;
  v.fields.emplace(a.vllm);
  return v;
}

// vLLM's step as the plugin runs it: its engine and fields. A step padded to a capture size runs the
// deployment's ACL graph; any other (a prefill above the capture sizes) runs eager. B of the MC2
// capacity is the deployment's largest capture size (ascend_forward_context.py,
// set_mc2_tokens_capacity) whether or not this step runs a graph, so an eager step names it.
Case as_ascend_step(Case c, const Fields& fields, const VllmDeployment& v) {
  c.engine = engine();
  c.path = Path::single;
  c.monolithic = false;
  Fields f = fields;
  if (f.mc2_tokens == 0 && !v.cudagraph_sizes.empty()) f.mc2_tokens = v.cudagraph_sizes.back();
  if (c.padding.mode != PaddingMode::cudagraph) f.graph = Graph::eager;
  c.engine_fields.emplace<Fields>(f);
  return c;
}

}  // namespace

Status read_ascend_deployment(const json& doc, Deployment& d) {
  if (!doc.is_object()) return Error{"deployment: expected an object"};
  for (const char* key : {"path", "monolithic"})
    if (doc.contains(key)) return Error{std::string(key) + ": not a key of an ascend deployment (its comm type places the rows)"};
  const auto ascend = doc.find("ascend");
  if (ascend == doc.end()) return Error{"ascend: missing (an ascend deployment names chip, runner and graph)"};
  json vllm_doc = doc;
  vllm_doc.erase("ascend");
  // vLLM's reader wants a path its rules accept for the topology (single needs DP = 1); an Ascend
  // step has none of its own (the comm type places the rows), and as_ascend_step sets single.
  const auto topology = doc.find("topology");
  const bool many_dp = topology != doc.end() && topology->is_object() && topology->contains("dp") &&
                       (*topology)["dp"].is_number_integer() && (*topology)["dp"].get<int64_t>() > 1;
  vllm_doc["path"] = many_dp ? "gathered" : "single";
  R3_TRY_STATUS(read_vllm_deployment(vllm_doc, d));  // the labels into d, vLLM's fields into d.fields
  AscendDeployment a{vllm_deployment_of(d), {}};
  R3_TRY(a.fields, read_ascend_fields(*ascend));
  const bool graphs = !a.vllm.cudagraph_sizes.empty();
  if (graphs && a.fields.graph == Graph::eager) {
    return Error{"ascend.graph: eager, but cudagraph lists capture sizes (name the ACL graph mode its decode steps run: "
                 "piecewise, full_decode_only or npugraph_ex)"};
  }
  if (!graphs && a.fields.graph != Graph::eager) {
    return Error{"ascend.graph: " + std::string(to_string(a.fields.graph)) +
                 " needs the capture sizes its steps are padded to (cudagraph)"};
  }
  Case base = as_ascend_step(vllm_deployment_case(d), a.fields, a.vllm);
  if (Status s = validate(base); !s.ok()) return Error{"deployment: " + s.error().message};
  d.fields.emplace(std::move(a));
  return ok_status();
}

Case ascend_deployment_case(const Deployment& d) {
  const AscendDeployment* a = ascend_deployment_of(d);
  if (!a) return Case{};
  Case c = as_ascend_step(vllm_deployment_case(as_vllm(d, *a)), a->fields, a->vllm);
  c.note = d.note;
  return c;
}

TrafficSize ascend_traffic_size(const Deployment& d) {
  const AscendDeployment* a = ascend_deployment_of(d);
  return a ? vllm_traffic_size(a->vllm) : TrafficSize{};
}

void generate_ascend_traffic(const Deployment& d, const std::function<bool(Case)>& emit) {
  const AscendDeployment* a = ascend_deployment_of(d);
  if (!a) return;
  generate_vllm_traffic(as_vllm(d, *a), [&](Case c) {
    c = as_ascend_step(std::move(c), a->fields, a->vllm);
    c.note = d.note;
    return emit(std::move(c));
  });
}

}  // namespace r3::ascend
