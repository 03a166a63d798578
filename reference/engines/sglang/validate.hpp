// The rules an SGLang case obeys before any layout is derived (the case format, never the
// profile: profile.cpp says which valid cases each SGLang version runs).
#pragma once

#include "reference/case.hpp"
#include "reference/engines/sglang/forward.hpp"
#include "reference/error.hpp"

namespace r3::sglang {

Status validate(const Case& c);

// True when prepare_mlp_sync_batch runs, aligning every count to attn_tp (utils/common.py,
// require_mlp_sync: DP attention, or an a2a backend scattering over attn_tp > 1 ranks).
bool counts_aligned(const Case& c);

// The most tokens (extend) or requests (decode, verify) one DP rank may hold: chunked_prefill_size,
// or max_prefill_tokens when chunking is off (-1), or max_running_requests. validate() checks
// every count against it; exhaust skips the sizes a unit's counts do not fit (fuzz/exhaust).
int64_t most_per_rank(const Forward& f);

}  // namespace r3::sglang
