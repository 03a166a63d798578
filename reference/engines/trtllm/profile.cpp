// The per-step cases of profile trtllm. TensorRT-LLM's capture writes the router's top-k of the
// forward's rows, in forward row order, into one device buffer [max_num_tokens, L, K]
// (route_capture.py: RouteCapture._capture @ 06a976ce and aa94b01; contract R1), and _prepare
// lays those rows out as context rows, then generation rows, then dummy and CUDA-graph padding
// rows as (none, -1) (RouteCapture._prepare, same commits; contract R2). That is the base
// layout's single path: real rows first, then padding. What the contract did not read is kept
// outside the profile rather than guessed: attention DP (which rows an attention-DP rank's MoE
// hands the hook), expert- and sequence-parallel MoE, and more than one MoE call per layer.
#include "reference/engines/trtllm/profile.hpp"

#include <algorithm>
#include <string>

namespace r3::trtllm {
namespace {

Status outside(const std::string& field, const std::string& why) {
  return Error{field + ": " + why + " (profile trtllm models the single-rank MoE call of route_capture.py, "
                                    "RouteCapture._capture @ 06a976ce and aa94b01)"};
}

}  // namespace

Status check_step_profile(const Case& c) {
  if (c.topology.dp != 1) return outside("topology.dp", std::to_string(c.topology.dp) + " DP ranks: attention DP's per-step layout is not modelled");
  if (c.topology.ep || c.topology.sp) return outside("topology", "expert- or sequence-parallel MoE is not modelled");
  // PyExecutor._executor_loop forwards only when scheduled_batch.batch_size > 0 without attention
  // DP (tensorrt_llm/_torch/pyexecutor/py_executor.py, every stored copy read on 2026-12-06): a
  // step of the one rank has at least one row.
  if (c.tokens.size() == 1 && c.tokens[0] == 0) return outside("tokens", "a forward of no row is never run");
  if (c.path != Path::single) return outside("path", std::string(to_string(c.path)) + " is not the single-rank path");
  if (c.microbatches != 1) return outside("microbatches", "TensorRT-LLM has no micro-batched capture");
  if (c.dp_chunk) return outside("dp_chunk", "a multi-chunk MoE call is not in the base case");
  if (c.metadata) return outside("metadata", "there is no DP metadata on one rank");
  if (c.monolithic) return outside("monolithic", "TensorRT-LLM has no replay buffer");
  if (c.idle_dummy) return outside("idle_dummy", "one DP rank is never idle with a dummy");
  if (c.padding.mode == PaddingMode::dp_max) return outside("padding", "dp_max pads DP ranks, and there is one");
  return ok_status();
}

Case fit_step_to_profile(Case c) {
  c.topology = {1, c.topology.tp, false, false};
  if (c.tokens.size() > 1) c.tokens.resize(1);
  if (c.tokens.empty()) c.tokens.push_back(1);
  c.tokens[0] = std::max<int64_t>(c.tokens[0], 1);
  c.path = Path::single;
  c.microbatches = 1;
  c.dp_chunk.reset();
  c.metadata.reset();
  c.monolithic = false;
  c.idle_dummy = false;
  if (c.padding.mode == PaddingMode::dp_max) c.padding = {};
  return c;
}

}  // namespace r3::trtllm
