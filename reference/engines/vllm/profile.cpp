// vLLM's profiles (docs/layout-contract.md section 10): which valid cases vLLM main (profile
// vllm) and the releases with MoE DP chunking (vllm-legacy) run. Each rule names the vLLM code
// it comes from; the contract has the same rules with the same sources.
#include "reference/engines/vllm/profile.hpp"

#include <algorithm>
#include <numeric>

#include "reference/layout.hpp"

namespace r3::vllm {
namespace {

// The paths the modular all-to-all kernel hands capture (docs/layout-contract.md 9.1).
bool on_modular_kernel(const Case& c) { return c.path == Path::local || c.path == Path::sp_shard; }

int64_t total_tokens(const Case& c) { return std::accumulate(c.tokens.begin(), c.tokens.end(), int64_t{0}); }

// vllm/config/vllm.py, VllmConfig._set_cudagraph_sizes: max_cudagraph_capture_size is clamped to
// max_num_batched_tokens and capture sizes above it are dropped, so no bucket exceeds M.
Status check_cudagraph_sizes(const Case& c) {
  if (c.padding.mode != PaddingMode::cudagraph) return ok_status();
  const int64_t largest = c.padding.cudagraph_sizes.back();
  if (largest <= c.max_num_tokens) return ok_status();
  return Error{"padding.cudagraph: size " + std::to_string(largest) + " is above max_num_tokens " +
               std::to_string(c.max_num_tokens) +
               " (vLLM clamps capture sizes to max_num_batched_tokens: vllm/config/vllm.py, "
               "VllmConfig._set_cudagraph_sizes)"};
}

// vllm/v1/worker/gpu_worker.py, Worker.execute_dummy_batch -> GPUModelRunner._dummy_run(1): a
// DP rank with no request runs a one-token dummy batch, and that count enters the DP
// coordination. A step in which no rank has a request is not run at all
// (vllm/v1/engine/core.py, DPEngineCoreProc: dummy batches only while the DP wave is running).
Status check_idle_ranks(const Case& c) {
  if (total_tokens(c) == 0) {
    return Error{"tokens: every rank is idle; vLLM runs no step then (dummy batches run only while "
                 "another DP rank has requests: vllm/v1/engine/core.py, DPEngineCoreProc)"};
  }
  if (c.topology.dp > 1 && !c.idle_dummy) {
    return Error{"idle_dummy: must be true with dp > 1 (an idle DP rank runs one dummy token: "
                 "vllm/v1/worker/gpu_worker.py, Worker.execute_dummy_batch -> _dummy_run(1))"};
  }
  return ok_status();
}

// vllm/v1/worker/ubatch_utils.py and dp_utils.py (docs/design/dbo.md): dual batch overlap runs
// only under DP with expert parallelism, on the modular all-to-all kernel (capture sees the local
// batch or the SP shard), and only when every DP rank votes yes; a rank whose last micro-batch
// would hold no real token votes no (is_last_ubatch_empty).
Status check_microbatches(const Case& c) {
  if (c.microbatches <= 1) return ok_status();
  const std::string why = " (vLLM's dual batch overlap: vllm/v1/worker/ubatch_utils.py, docs/design/dbo.md)";
  if (!c.topology.ep) return Error{"microbatches: vLLM micro-batches only with expert parallelism (ep true)" + why};
  if (!on_modular_kernel(c)) {
    return Error{"microbatches: vLLM micro-batches only on the modular all-to-all kernel (path local or "
                 "sp_shard), path is " + std::string(to_string(c.path)) + why};
  }
  const std::vector<int64_t> n = derive_num_tokens_across_dp(c);
  for (size_t d = 0; d < c.tokens.size(); ++d) {
    if (last_ubatch_empty(n[d], c.tokens[d], c.microbatches)) {
      return Error{"microbatches: rank " + std::to_string(d) + " has " + std::to_string(c.tokens[d]) +
                   " real tokens of " + std::to_string(n[d]) + ", so its last of " +
                   std::to_string(c.microbatches) +
                   " micro-batches holds none and it votes against micro-batching "
                   "(vllm/v1/worker/ubatch_utils.py, is_last_ubatch_empty)"};
    }
  }
  return ok_status();
}

}  // namespace

int64_t fewest_tokens_to_vote_for_ubatches(int64_t padded, int ubatches) {
  return (padded / ubatches) * (ubatches - 1) + 1;
}

bool last_ubatch_empty(int64_t padded, int64_t real, int ubatches) {
  return real < fewest_tokens_to_vote_for_ubatches(padded, ubatches);
}

Status check_profile(const Case& c, Variant version) {
  const std::string in = " under profile " + std::string(version == Variant::legacy ? "vllm-legacy" : "vllm");
  auto named = [&](Status s) -> Status {
    if (s.ok()) return s;
    return Error{s.error().message + in};
  };
  R3_TRY_STATUS(named(check_cudagraph_sizes(c)));
  R3_TRY_STATUS(named(check_idle_ranks(c)));
  R3_TRY_STATUS(named(check_microbatches(c)));
  // PR #39107 removed MoE DP chunking (forward_impl_chunked, VLLM_MOE_DP_CHUNK_SIZE) before PR
  // #50874 added today's capture(); older releases have it (profile vllm-legacy).
  if (c.dp_chunk && version != Variant::legacy) {
    return Error{"dp_chunk: vLLM main has no MoE DP chunking (removed by PR #39107; use profile vllm-legacy)" + in};
  }
  // vllm/forward_context.py, DPMetadata.make: num_tokens_across_dp and local_sizes are built
  // from the same counts the ranks run, so they never disagree with the tensor.
  if (c.metadata) return Error{"metadata: vLLM derives its DP metadata from the step, overrides need profile any" + in};
  return ok_status();
}

Case fit_to_profile(Case c, Variant version) {
  if (c.padding.mode == PaddingMode::cudagraph && c.padding.cudagraph_sizes.back() > c.max_num_tokens) {
    // As _set_cudagraph_sizes does: drop the sizes above M and add M itself.
    auto& sizes = c.padding.cudagraph_sizes;
    std::erase_if(sizes, [&](int64_t s) { return s > c.max_num_tokens; });
    if (sizes.empty() || sizes.back() < c.max_num_tokens) sizes.push_back(c.max_num_tokens);
  }
  if (total_tokens(c) == 0) c.tokens.front() = 1;
  if (c.topology.dp > 1) c.idle_dummy = true;
  if (c.dp_chunk && version != Variant::legacy) c.dp_chunk.reset();
  c.metadata.reset();
  if (!check_microbatches(c).ok()) c.microbatches = 1;
  return c;
}

bool may_microbatch(const Case& c) { return c.topology.ep && on_modular_kernel(c); }

}  // namespace r3::vllm
