// An SGLang deployment description (format "r3fuzz-deployment/1" with "engine": "sglang";
// docs/FUZZING.md, "Seeding from production"): SGLang's launch knobs, in the case's terms (tp per
// DP rank, chunked_prefill_size and max_running_requests per DP rank), and a traffic profile. It
// becomes SGLang cases (seed.cpp, SGLang's seed part) the way a vLLM deployment becomes vLLM
// cases (fuzz/engines/vllm/deployment.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fuzz/seed/traffic.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

struct SglangDeployment {
  // An SGLang case holding every knob (topology, model, forward kind, spec width, CUDA graphs,
  // TBO, sizes); the traffic sets its counts and last_decode_bucket. No note: each case gets the
  // deployment's as it is made (seed.cpp).
  Case base;
  std::optional<std::pair<int64_t, int64_t>> decode_requests;  // busiest rank's requests, inclusive
  std::vector<int64_t> prefill_lengths;                        // tokens per DP rank
  bool operator==(const SglangDeployment&) const = default;
};

// The decode buckets SGLang captures by default for --cuda-graph-max-bs `max_bs`
// (server_args.py, _generate_decode_cuda_graph_batch_sizes: a denser list under speculative
// decoding), then filtered as model_executor/runner/base_cuda_graph_runner.py
// get_batch_sizes_to_capture does: bs * width a multiple of `align` (width 1 under TBO), and none
// above the request pool, max_running_requests rounded up to `align`, which is added when the
// list reaches past it. Stops after limits::kMaxCudagraphSizes + 1 buckets: a list that long is
// refused (the caller names decode_max_bs), so none longer is ever held.
std::vector<int64_t> sglang_default_decode_buckets(int64_t max_bs, bool speculative, int64_t align, int64_t width,
                                                   int64_t max_running_requests);

// `doc` is a whole deployment object whose "engine" is "sglang". Name and note are read by the
// caller (seed.cpp, with fuzz/seed/engine_seed.hpp's read_deployment_labels). Errors name the
// field; every list and number is bounded (traffic.hpp, reference/limits.hpp), the traffic's
// size included.
Result<SglangDeployment> sglang_deployment_from_json(const nlohmann::json& doc);

// Decode (or verify) steps at the range ends and at every decode bucket in range and its
// neighbours (+-1), rank 0 busiest, the others fewer (some idle); prefill steps with every rank at
// each length and with the last rank one short, before any decode replay and, where decode graphs
// exist, after a replay of the largest bucket. Each is handed to `emit`, in that order, until it
// returns false; none is validated here (fuzz/seed/seed.hpp, for_each_traffic_case, does that).
void generate_sglang_traffic(const SglangDeployment& d, const std::function<bool(Case)>& emit);

// How many cases generate_sglang_traffic() makes, counted without making them.
TrafficSize sglang_traffic_size(const SglangDeployment& d);

}  // namespace r3
