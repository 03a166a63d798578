// Each rule below names the vLLM code it comes from; docs/layout-contract.md section 10 has
// the same rules with the same sources.
#include "reference/profile.hpp"

#include <algorithm>
#include <numeric>

#include "reference/engines/sglang/profile.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

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
  if (!engine_may_microbatch(c, Profile::vllm)) {
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



Engine engine_of(Profile profile) {
  return profile == Profile::sglang || profile == Profile::sglang_miles ? Engine::sglang : Engine::vllm;
}

bool covers(Profile profile, Engine engine) { return profile == Profile::any || engine_of(profile) == engine; }
Status check_profile(const Case& c, Profile profile) {
  if (profile == Profile::any) return ok_status();
  if (!covers(profile, c.engine)) {
    return Error{"engine: a " + std::string(to_string(c.engine)) + " case lies outside profile " +
                 std::string(to_string(profile)) + ", which is " + std::string(to_string(engine_of(profile))) + "'s"};
  }
  if (c.engine == Engine::sglang) return sglang::check_profile(c, profile);
  const std::string in = " under profile " + std::string(to_string(profile));
  auto named = [&](Status s) -> Status {
    if (s.ok()) return s;
    return Error{s.error().message + in};
  };
  R3_TRY_STATUS(named(check_cudagraph_sizes(c)));
  R3_TRY_STATUS(named(check_idle_ranks(c)));
  R3_TRY_STATUS(named(check_microbatches(c)));
  // PR #39107 removed MoE DP chunking (forward_impl_chunked, VLLM_MOE_DP_CHUNK_SIZE) before PR
  // #50874 added today's capture(); older releases have it (profile vllm-legacy).
  if (c.dp_chunk && !chunking_allowed(profile)) {
    return Error{"dp_chunk: vLLM main has no MoE DP chunking (removed by PR #39107; use profile vllm-legacy)" + in};
  }
  // vllm/forward_context.py, DPMetadata.make: num_tokens_across_dp and local_sizes are built
  // from the same counts the ranks run, so they never disagree with the tensor.
  if (c.metadata) return Error{"metadata: vLLM derives its DP metadata from the step, overrides need profile any" + in};
  return ok_status();
}

bool in_profile(const Case& c, Profile profile) { return check_profile(c, profile).ok(); }

Case fit_to_profile(Case c, Profile profile) {
  if (profile == Profile::any || !covers(profile, c.engine)) return c;
  if (c.engine == Engine::sglang) return sglang::fit_to_profile(std::move(c), profile);
  if (c.padding.mode == PaddingMode::cudagraph && c.padding.cudagraph_sizes.back() > c.max_num_tokens) {
    // As _set_cudagraph_sizes does: drop the sizes above M and add M itself.
    auto& sizes = c.padding.cudagraph_sizes;
    std::erase_if(sizes, [&](int64_t s) { return s > c.max_num_tokens; });
    if (sizes.empty() || sizes.back() < c.max_num_tokens) sizes.push_back(c.max_num_tokens);
  }
  if (total_tokens(c) == 0) c.tokens.front() = 1;
  if (c.topology.dp > 1) c.idle_dummy = true;
  if (c.dp_chunk && !chunking_allowed(profile)) c.dp_chunk.reset();
  c.metadata.reset();
  if (!check_microbatches(c).ok()) c.microbatches = 1;
  return c;
}

ProfileStanding standing_of(const Case& c) {
  ProfileStanding s;
  s.profile = profile_of(c);
  s.named = c.profile.has_value();
  if (Status inside = check_profile(c, s.profile); !inside.ok()) s.outside = inside.error().message;
  return s;
}

std::string ProfileStanding::text() const {
  std::string t = "profile " + std::string(to_string(profile)) + (named ? " (named in the case)" : " (the narrowest it lies in)");
  return outside ? t + ": OUTSIDE it: " + *outside : t;
}

Profile profile_of(const Case& c) {
  if (c.profile) return *c.profile;
  if (c.engine == Engine::sglang) {
    for (Profile p : {Profile::sglang, Profile::sglang_miles})
      if (in_profile(c, p)) return p;
    return Profile::any;
  }
  for (Profile p : {Profile::vllm, Profile::vllm_legacy}) {
    if (in_profile(c, p)) return p;
  }
  return Profile::any;
}

}  // namespace r3
