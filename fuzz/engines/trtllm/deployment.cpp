// TensorRT-LLM deployments as seeds (deployment.hpp). The options are the LLM API's
// (tensorrt_llm/llmapi/llm_args.py: TorchLlmArgs, DecodeCudaGraphConfig; examples/configs/curated/
// *.yaml spell them), in the units a per-step case needs.
#include "fuzz/engines/trtllm/deployment.hpp"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/seed/engine_seed.hpp"
#include "fuzz/seed/int_list.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/limits.hpp"
#include "reference/validate.hpp"

namespace r3::trtllm {
namespace {

using json = nlohmann::json;

Status read_model(const json& m, ModelShape& model) {
  if (!m.is_object()) return Error{"model: expected an object with layers, top_k and experts"};
  for (const auto& item : m.items()) {
    int64_t bound = 0;
    int* field = nullptr;
    if (item.key() == "layers") {
      field = &model.layers;
      bound = limits::kMaxLayers;
    } else if (item.key() == "top_k") {
      field = &model.top_k;
      bound = limits::kMaxTopK;
    } else if (item.key() == "experts") {
      field = &model.experts;
      bound = limits::kMaxExperts;
    } else {
      return Error{"model: unknown key \"" + item.key() + "\" (allowed: layers, top_k, experts)"};
    }
    R3_TRY(const int64_t v, bounded_int(item.value(), "model." + item.key(), 1, bound));
    *field = static_cast<int>(v);
  }
  return ok_status();
}

// cuda_graph_config: batch_sizes (or max_batch_size alone, from which the LLM API generates them)
// and enable_padding (default false: DecodeCudaGraphConfig). Only padding adds rows to a step.
Status read_cuda_graph(const json& g, std::vector<int64_t>& sizes, bool& padding) {
  if (!g.is_object()) return Error{"cuda_graph_config: expected an object with batch_sizes and enable_padding"};
  for (const auto& item : g.items()) {
    if (item.key() == "batch_sizes") {
      R3_TRY(sizes, int_list(item.value(), "cuda_graph_config.batch_sizes", limits::kMaxCudagraphSizes));
    } else if (item.key() == "enable_padding") {
      if (!item.value().is_boolean()) return Error{"cuda_graph_config.enable_padding: expected true or false"};
      padding = item.value().get<bool>();
    } else {
      return Error{"cuda_graph_config: unknown key \"" + item.key() + "\" (allowed: batch_sizes, enable_padding)"};
    }
  }
  if (sizes.empty()) return Error{"cuda_graph_config.batch_sizes: missing or empty"};
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1 || (i > 0 && sizes[i] <= sizes[i - 1]))
      return Error{"cuda_graph_config.batch_sizes[" + std::to_string(i) + "]: expected increasing sizes of at least 1"};
  }
  return ok_status();
}

Status read_traffic(const json& t, TrtllmDeployment& d) {
  R3_TRY(DeclaredTraffic traffic, read_declared_traffic(t, "decode_batches", 1));
  d.decode_batches = traffic.decode;
  d.prefill_lengths = std::move(traffic.prefill_lengths);
  return ok_status();
}

Case with_rows(const Deployment& d, int64_t rows, bool decode) {
  const TrtllmDeployment& v = trtllm_deployment_of(d);
  Case c = trtllm_deployment_case(d);
  c.tokens = {rows};
  if (decode && !v.padded_batch_sizes.empty()) c.padding = Padding{PaddingMode::cudagraph, v.padded_batch_sizes};
  return c;
}

}  // namespace

const TrtllmDeployment& trtllm_deployment_of(const Deployment& d) {
  static const TrtllmDeployment defaults;
  const TrtllmDeployment* v = d.fields.get<TrtllmDeployment>();
  return v ? *v : defaults;
}

Status read_trtllm_deployment(const json& doc, Deployment& d) {
  R3_TRY_STATUS(read_deployment_labels(doc, d));
  TrtllmDeployment v;
  std::vector<int64_t> graph_sizes;
  bool padding = false;
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    const json& value = item.value();
    if (key == "format" || key == "engine" || key == "name" || key == "note") {
      // read_deployment_labels() has read them.
    } else if (key == "tensor_parallel_size") {
      R3_TRY(const int64_t tp, bounded_int(value, key, 1, limits::kMaxTp));
      v.tp = static_cast<int>(tp);
    } else if (key == "model") {
      R3_TRY_STATUS(read_model(value, v.model));
    } else if (key == "max_num_tokens") {
      R3_TRY(v.max_num_tokens, bounded_int(value, key, 1, limits::kMaxRows));
    } else if (key == "max_batch_size") {
      R3_TRY(v.max_batch_size, bounded_int(value, key, 1, limits::kMaxRows));
    } else if (key == "cuda_graph_config") {
      R3_TRY_STATUS(read_cuda_graph(value, graph_sizes, padding));
    } else if (key == "traffic") {
      R3_TRY_STATUS(read_traffic(value, v));
    } else {
      return Error{"deployment: unknown key \"" + key +
                   "\" (allowed: format, engine, name, note, tensor_parallel_size, model, max_num_tokens, "
                   "max_batch_size, cuda_graph_config, traffic)"};
    }
  }
  for (const char* key : {"model", "max_num_tokens", "max_batch_size", "traffic"})
    if (!doc.contains(key)) return Error{std::string(key) + ": missing"};
  if (v.model.top_k > v.model.experts) return Error{"model.top_k: " + std::to_string(v.model.top_k) + " is above model.experts"};
  // CUDAGraphRunner._get_padded_batch (cuda_graph_runner.py @ 7b437aa) pads only when padding is
  // enabled and the padded batch stays within the engine's batch size: a captured size above
  // max_batch_size never pads a batch.
  if (padding)
    for (int64_t size : graph_sizes)
      if (size <= v.max_batch_size && size <= v.max_num_tokens) v.padded_batch_sizes.push_back(size);
  const int64_t most_batch = std::min(v.max_batch_size, v.max_num_tokens);
  if (v.decode_batches && v.decode_batches->second > most_batch) {
    return Error{"traffic.decode_batches: " + std::to_string(v.decode_batches->second) +
                 " is above max_batch_size and max_num_tokens (" + std::to_string(most_batch) + ")"};
  }
  for (size_t i = 0; i < v.prefill_lengths.size(); ++i) {
    const int64_t length = v.prefill_lengths[i];
    if (length < 1 || length > v.max_num_tokens) {
      return Error{"traffic.prefill_lengths[" + std::to_string(i) + "]: " + std::to_string(length) + " is outside [1, " +
                   std::to_string(v.max_num_tokens) + "] (max_num_tokens)"};
    }
  }
  R3_TRY_STATUS(check_traffic_size(trtllm_traffic_size(v)));
  d.fields.emplace(std::move(v));
  return ok_status();
}

Case trtllm_deployment_case(const Deployment& d) {
  const TrtllmDeployment& v = trtllm_deployment_of(d);
  Case c;
  c.engine = engine();
  c.topology = {1, v.tp, false, false};
  c.model = v.model;
  c.max_num_tokens = v.max_num_tokens;
  c.tokens = {1};
  c.layer = v.model.layers - 1;
  c.note = d.note;
  return c;
}

void generate_trtllm_traffic(const Deployment& d, const std::function<bool(Case)>& emit) {
  const TrtllmDeployment& v = trtllm_deployment_of(d);
  if (v.decode_batches) {
    for (int64_t rows : decode_targets(*v.decode_batches, v.padded_batch_sizes))
      if (rows >= 1 && !emit(with_rows(d, rows, true))) return;
  }
  for (int64_t length : v.prefill_lengths)
    if (!emit(with_rows(d, length, false))) return;
}

TrafficSize trtllm_traffic_size(const TrtllmDeployment& v) {
  const size_t decode = v.decode_batches ? decode_targets(*v.decode_batches, v.padded_batch_sizes).size() : 0;
  return {static_cast<int64_t>(decode), static_cast<int64_t>(v.prefill_lengths.size())};
}

}  // namespace r3::trtllm
