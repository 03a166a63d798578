// vLLM's profiles (docs/layout-contract.md section 10): vllm (current main) and vllm-legacy (the
// releases with MoE DP chunking, before PR #39107). Each rule names the vLLM code it comes from.
#pragma once

#include <cstdint>

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3::vllm {

// vLLM's profiles, in the order the engine registers them (the first is the default).
enum class Variant { main, legacy };

// Why vLLM `version` never runs the valid case `c`; ok when it runs it.
Status check_profile(const Case& c, Variant version);

// The smallest edits that bring `c` inside `version`: CUDA-graph sizes clamped to M the way vLLM
// clamps them, idle ranks given their dummy token, micro-batching, DP chunking (main) and
// metadata overrides dropped, one token for a step in which every rank is idle.
Case fit_to_profile(Case c, Variant version);

// vLLM micro-batches (dual batch overlap) only with EP on the modular all-to-all kernel's paths
// (capture sees the local batch or the SP shard): vllm/v1/worker/ubatch_utils.py.
bool may_microbatch(const Case& c);

// vLLM's micro-batching vote (vllm/v1/worker/ubatch_utils.py, is_last_ubatch_empty): a rank with
// `real` tokens, padded to `padded` rows and split into `ubatches`, votes no when its last
// micro-batch would hold no real token, i.e. with fewer real tokens than the first ubatches - 1
// micro-batches hold plus one.
int64_t fewest_tokens_to_vote_for_ubatches(int64_t padded, int ubatches);
bool last_ubatch_empty(int64_t padded, int64_t real, int ubatches);

}  // namespace r3::vllm
