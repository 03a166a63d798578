// A vLLM deployment description (format "r3fuzz-deployment/1", "engine" absent or "vllm";
// docs/FUZZING.md, "Seeding from production"): the case format's own fields (topology, model,
// max_num_tokens, path, monolithic), vLLM's CUDA-graph capture sizes and a traffic profile of
// decode batches and prefill lengths; and vLLM's metadata logs, one JSON line of DP metadata
// (num_tokens_across_dp, local_sizes) per step, as an engine hook dumps them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fuzz/seed/seed.hpp"
#include "fuzz/seed/traffic.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

// What a vLLM deployment holds beyond its name and note (Deployment::fields).
struct VllmDeployment {
  Topology topology;
  ModelShape model;
  int64_t max_num_tokens = 1;
  Path path = Path::single;
  bool monolithic = false;
  std::vector<int64_t> cudagraph_sizes;                       // empty: no CUDA graphs
  std::optional<std::pair<int64_t, int64_t>> decode_batches;  // per-rank requests, inclusive
  std::vector<int64_t> prefill_lengths;                       // per-rank batched tokens
  bool operator==(const VllmDeployment&) const = default;
};

// The vLLM fields of `d` (the defaults above when it holds none).
const VllmDeployment& vllm_deployment_of(const Deployment& d);

// Reads every key of `doc` into `d` (name and note too, in the document's order).
Status read_vllm_deployment(const nlohmann::json& doc, Deployment& d);

// The base case (tokens all zero, last layer, the deployment's note).
Case vllm_deployment_case(const Deployment& d);

// Decode steps at every capture size in the batch range and its neighbours (sizes +-1 straddle
// the buckets), and prefill steps at each length (all ranks equal, and the last rank one token
// short), each handed to `emit`, in that order, until it returns false; none validated here.
void generate_vllm_traffic(const Deployment& d, const std::function<bool(Case)>& emit);
// How many cases generate_vllm_traffic() makes: one decode step per target, two prefill steps
// per length.
TrafficSize vllm_traffic_size(const VllmDeployment& v);

// The case of one metadata-log line: the logged metadata as its override, checked against the
// deployment (one count per DP rank, each within max_num_tokens; local_sizes as vLLM derives them).
Result<Case> vllm_log_case(const Deployment& d, std::string_view line);

}  // namespace r3
