// A TensorRT-LLM deployment description (format "r3fuzz-deployment/1", "engine": "trtllm";
// docs/FUZZING.md, "Seeding from production"): the LLM API options that shape a step's capture
// (tensor_parallel_size, the model, max_num_tokens, max_batch_size, cuda_graph_config) and a
// traffic profile of decode batches and prefill lengths. One rank serves every step (profile
// trtllm), so there is no DP metadata log to seed from.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fuzz/seed/seed.hpp"
#include "fuzz/seed/traffic.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3::trtllm {

// What a TensorRT-LLM deployment holds beyond its name and note (Deployment::fields).
struct TrtllmDeployment {
  int tp = 1;
  ModelShape model;
  int64_t max_num_tokens = 1;
  int64_t max_batch_size = 1;
  // The captured batch sizes a batch is padded up to; empty: no CUDA graphs, or padding off
  // (cuda_graph_config.enable_padding false: a batch runs a graph of its own size only, unpadded).
  std::vector<int64_t> padded_batch_sizes;
  std::optional<std::pair<int64_t, int64_t>> decode_batches;  // requests, inclusive
  std::vector<int64_t> prefill_lengths;                       // batched tokens of a context step
  bool operator==(const TrtllmDeployment&) const = default;
};

const TrtllmDeployment& trtllm_deployment_of(const Deployment& d);

// Reads every key of `doc` into `d` (name and note too); errors name the key.
Status read_trtllm_deployment(const nlohmann::json& doc, Deployment& d);

// The base case: the forward's one row count 1, the last layer, the deployment's note.
Case trtllm_deployment_case(const Deployment& d);

// Decode steps at every padded batch size in the range and its neighbours (padded, as
// CUDAGraphRunner pads a generation-only batch), then one context step per prefill length
// (unpadded: only generation-only batches run graphs), each handed to `emit` until it returns false.
void generate_trtllm_traffic(const Deployment& d, const std::function<bool(Case)>& emit);
TrafficSize trtllm_traffic_size(const TrtllmDeployment& v);

}  // namespace r3::trtllm
