// The comm type of a step (../shared/spec/ascend-contract.md 2.1): ascend_forward_context.py,
// select_moe_comm_method and its per-SoC helpers, at vllm-ascend main 182b75ea.
#pragma once

#include <cstdint>

#include "reference/case.hpp"
#include "reference/engines/ascend/fields.hpp"

namespace r3::ascend {

// set_mc2_tokens_capacity: min(ceil(B / T), limit) * T, limit 512 for MC2
// (_MC2_TOKENS_PER_RANK_LIMIT), with fused MC2 4096 when mega_moe (_MEGA_MOE_TOKENS_PER_RANK_LIMIT)
// else 512 (_DISPATCH_FFN_COMBINE_TOKENS_PER_RANK_LIMIT).
int64_t mc2_capacity(const Case& c, const Fields& f);

// select_moe_comm_method(num_tokens, ...) for a step whose largest count is `largest`: the
// argument is the max over DP ranks, so every rank of a step picks the same type. In order:
// EP off or an EP group of 1 -> ALLGATHER; LoRA with EP -> ALLTOALL; then by SoC
// (_select_a2/_a3/_a5_moe_comm_method; 310P -> ALLGATHER). EP size is D*T (PP = 1).
Comm derive_comm(const Case& c, const Fields& f, int64_t largest);

}  // namespace r3::ascend
