// vLLM's part of `r3fuzz exhaust`'s space (fuzz/exhaust/case_space.hpp), in one fixed order.
// A unit is (D, T, flags, token vector); it expands into its cases. The order, most significant
// first:
//   D, T, flags (plain < ep < ep+sp), sum of tokens, tokens (lexicographic), M,
//   path (single | gathered, local | sp_shard), padding variant (below), monolithic (false < true),
//   microbatches U, dp_chunk C (none < 1 < 2 ...), layer (0 < L-1).
// Enumerated per unit and M:
//   - M in max(1, max tokens) .. max_m; every real-token count is <= M;
//   - paths allowed by the topology: single when D = 1; gathered and local (sp_shard with SP);
//   - padding: none, dp_max, cudagraph [1] (any step above one token runs eager),
//     cudagraph [2, 4, .., first power of two >= M], cudagraph [M+1] (a bucket above M);
//   - monolithic true and false on single and gathered;
//   - U in 1..4 with dp_max and D > 1;
//   - C in 1..max_d(N_d)+1 on local and sp_shard (N_d = n_d, or ceil(n_d/T) with SP): a larger C
//     gives the same single chunk;
//   - layer 0 and L-1.
// Metadata overrides (the rejection cases) are not enumerated. The engine is registered first,
// so under profile any its units come before every other engine's.
#pragma once

#include <cstdint>

#include "fuzz/exhaust/engine_exhaust.hpp"
#include "reference/case.hpp"

namespace r3::vllm {

// The number of padding variants enumerated, and variant `index` for maximum tokens M.
inline constexpr int kPaddingVariants = 5;
Padding padding_variant(int index, int64_t max_num_tokens);

}  // namespace r3::vllm
