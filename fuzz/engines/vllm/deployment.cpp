#include "fuzz/engines/vllm/deployment.hpp"

#include <algorithm>
#include <climits>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/strict_json.hpp"
#include "fuzz/seed/engine_seed.hpp"
#include "fuzz/seed/int_list.hpp"
#include "reference/layout.hpp"
#include "reference/limits.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using json = nlohmann::json;

// "cudagraph": "vllm-default": the capture sizes vLLM captures when none are configured.
std::vector<int64_t> vllm_default_capture_sizes() {
  std::vector<int64_t> sizes = {1, 2, 4};
  for (int64_t s = 8; s <= 512; s += 8) sizes.push_back(s);
  return sizes;
}

Status read_traffic(const json& t, VllmDeployment& d) {
  R3_TRY(DeclaredTraffic traffic, read_declared_traffic(t, "decode_batches", 0));
  d.decode_batches = traffic.decode;
  d.prefill_lengths = std::move(traffic.prefill_lengths);
  return ok_status();
}

Case with_tokens(const Deployment& d, std::vector<int64_t> tokens, bool cudagraph) {
  const VllmDeployment& v = vllm_deployment_of(d);
  Case c = vllm_deployment_case(d);
  c.tokens = std::move(tokens);  // within [0, M]: read_vllm_deployment() refuses traffic beyond M
  if (cudagraph && !v.cudagraph_sizes.empty()) c.padding = Padding{PaddingMode::cudagraph, v.cudagraph_sizes};
  return c;
}

std::optional<std::string> check_log_metadata(const VllmDeployment& d, const std::vector<int64_t>& n,
                                              const std::optional<std::vector<int64_t>>& local_sizes) {
  const size_t dp = static_cast<size_t>(d.topology.dp);
  if (n.size() != dp) {
    return "num_tokens_across_dp has " + std::to_string(n.size()) + " entries, expected " + std::to_string(dp) + " (dp)";
  }
  for (size_t i = 0; i < n.size(); ++i) {
    if (n[i] < 0 || n[i] > d.max_num_tokens) {
      return "num_tokens_across_dp[" + std::to_string(i) + "] = " + std::to_string(n[i]) + " is outside [0, " +
             std::to_string(d.max_num_tokens) + "] (max_num_tokens of the deployment)";
    }
  }
  if (!local_sizes) return std::nullopt;
  const bool sp = d.topology.sp;
  const std::vector<int64_t> expected = derive_local_sizes(n, d.topology.tp, sp);
  if (local_sizes->size() != expected.size()) {
    return "local_sizes has " + std::to_string(local_sizes->size()) + " entries, expected " +
           std::to_string(expected.size()) + (sp ? " (dp*tp with sp)" : " (dp without sp)");
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if ((*local_sizes)[i] != expected[i]) {
      return "local_sizes[" + std::to_string(i) + "] = " + std::to_string((*local_sizes)[i]) + ", expected " +
             std::to_string(expected[i]) + (sp ? " (ceil(n_d/tp) of num_tokens_across_dp)" : " (num_tokens_across_dp)");
    }
  }
  return std::nullopt;
}

}  // namespace

const VllmDeployment& vllm_deployment_of(const Deployment& d) {
  static const VllmDeployment defaults;
  const VllmDeployment* v = d.fields.get<VllmDeployment>();
  return v ? *v : defaults;
}

Status read_vllm_deployment(const json& doc, Deployment& d) {
  R3_TRY_STATUS(read_deployment_labels(doc, d));
  VllmDeployment v;
  json as_case = {{"format", std::string(kCaseFormat)}, {"padding", "none"}};
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    const json& value = item.value();
    if (key == "format" || key == "engine" || key == "name" || key == "note") {
      // read_deployment_labels() has read them.
    } else if (key == "topology" || key == "model" || key == "max_num_tokens" || key == "path" || key == "monolithic") {
      as_case[key] = value;
    } else if (key == "cudagraph") {
      if (value == "vllm-default") {
        v.cudagraph_sizes = vllm_default_capture_sizes();
      } else {
        R3_TRY(v.cudagraph_sizes, int_list(value, "cudagraph", limits::kMaxCudagraphSizes));
        if (v.cudagraph_sizes.empty()) return Error{"cudagraph: empty; give capture sizes, or leave the key out for no CUDA graphs"};
      }
    } else if (key == "traffic") {
      R3_TRY_STATUS(read_traffic(value, v));
    } else {
      return Error{"deployment: unknown key \"" + key +
                   "\" (allowed: format, engine, name, note, topology, model, max_num_tokens, path, monolithic, cudagraph, "
                   "traffic)"};
    }
  }
  if (!doc.contains("traffic")) return Error{"traffic: missing"};
  const int dp = as_case.contains("topology") && as_case["topology"].is_object() && as_case["topology"].contains("dp") &&
                         as_case["topology"]["dp"].is_number_integer()
                     ? as_case["topology"]["dp"].get<int>()
                     : 1;
  as_case["tokens"] = std::vector<int64_t>(static_cast<size_t>(std::clamp(dp, 1, 1024)), 0);
  as_case["layer"] = 0;
  R3_TRY(Case base, case_from_json(as_case));
  v.topology = base.topology;
  v.model = base.model;
  v.max_num_tokens = base.max_num_tokens;
  v.path = base.path;
  v.monolithic = base.monolithic;
  // Traffic beyond M is an error in the deployment, not something to clamp silently.
  for (size_t i = 0; i < v.prefill_lengths.size(); ++i) {
    const int64_t length = v.prefill_lengths[i];
    if (length < 0 || length > v.max_num_tokens) {
      return Error{"traffic.prefill_lengths[" + std::to_string(i) + "]: " + std::to_string(length) + " is outside [0, " +
                   std::to_string(v.max_num_tokens) + "] (max_num_tokens)"};
    }
  }
  if (v.decode_batches && v.decode_batches->second > v.max_num_tokens) {
    return Error{"traffic.decode_batches: " + std::to_string(v.decode_batches->second) + " is above max_num_tokens " +
                 std::to_string(v.max_num_tokens)};
  }
  if (!v.cudagraph_sizes.empty()) {
    Case probe = base;
    probe.padding = Padding{PaddingMode::cudagraph, v.cudagraph_sizes};
    if (auto s = validate(probe); !s) return Error{"cudagraph: " + s.error().message};
  }
  R3_TRY_STATUS(check_traffic_size(vllm_traffic_size(v)));
  d.fields.emplace(std::move(v));
  return ok_status();
}

Case vllm_deployment_case(const Deployment& d) {
  const VllmDeployment& v = vllm_deployment_of(d);
  Case c;
  c.topology = v.topology;
  c.model = v.model;
  c.max_num_tokens = v.max_num_tokens;
  c.tokens.assign(static_cast<size_t>(v.topology.dp), 0);
  c.path = v.path;
  c.monolithic = v.monolithic;
  c.layer = v.model.layers - 1;
  c.note = d.note;
  return c;
}

void generate_vllm_traffic(const Deployment& d, const std::function<bool(Case)>& emit) {
  const VllmDeployment& v = vllm_deployment_of(d);
  const size_t dp = static_cast<size_t>(v.topology.dp);
  if (v.decode_batches) {
    for (int64_t t : decode_targets(*v.decode_batches, v.cudagraph_sizes))
      if (!emit(with_tokens(d, spread_over_ranks(v.topology.dp, t), true))) return;
  }
  for (int64_t length : v.prefill_lengths) {
    std::vector<int64_t> short_last(dp, length);
    short_last.back() = std::max<int64_t>(0, length - 1);
    if (!emit(with_tokens(d, std::vector<int64_t>(dp, length), false))) return;
    if (!emit(with_tokens(d, std::move(short_last), false))) return;
  }
}

TrafficSize vllm_traffic_size(const VllmDeployment& v) {
  const size_t decode = v.decode_batches ? decode_targets(*v.decode_batches, v.cudagraph_sizes).size() : 0;
  return {static_cast<int64_t>(decode), 2 * static_cast<int64_t>(v.prefill_lengths.size())};
}

// The lists are bounded by what any deployment can hold (one count per DP rank; one local size
// per rank of dp*tp), before check_log_metadata() compares them with this deployment's.
Result<Case> vllm_log_case(const Deployment& d, std::string_view line) {
  R3_TRY(const json doc, parse_json_strictly(line));
  if (!doc.is_object()) return Error{"not a JSON object"};
  std::optional<std::vector<int64_t>> n;
  bool local_given = false;
  std::optional<std::vector<int64_t>> local_sizes;
  for (const auto& item : doc.items()) {
    if (item.key() == "num_tokens_across_dp") {
      R3_TRY(n, int_list(item.value(), "num_tokens_across_dp", limits::kMaxDp, "(one count per DP rank)"));
    } else if (item.key() == "local_sizes") {
      local_given = true;
      if (!item.value().is_null()) {
        R3_TRY(local_sizes, int_list(item.value(), "local_sizes", limits::kMaxMetadataEntries, "(one per rank of dp*tp)"));
      }
    } else if (item.key() == "step") {
      // Only a label; it sizes nothing, but a step is still a count.
      R3_TRY_STATUS(bounded_int(item.value(), "step", 0, INT64_MAX));
    } else {
      return Error{"unknown key \"" + item.key() + "\" (allowed: step, num_tokens_across_dp, local_sizes)"};
    }
  }
  if (!n) return Error{"num_tokens_across_dp is missing"};
  if (auto problem = check_log_metadata(vllm_deployment_of(d), *n, local_sizes)) return Error{*problem};
  Case c = with_tokens(d, *n, false);
  c.metadata = MetadataOverride{n, local_given, local_sizes};
  R3_TRY_STATUS(validate(c));
  return c;
}

}  // namespace r3
