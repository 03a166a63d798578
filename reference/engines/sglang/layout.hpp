// SGLang's layout derivation: from an SGLang case to the Step every rank runs, capture call by
// capture call (two under TBO), with the forward-end window inputs in Step::engine_step (fields.hpp). Each rule
// names the SGLang code it models (docs/layout-contract.md section 11 has them all).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "reference/case.hpp"
#include "reference/engines/sglang/forward_layout.hpp"
#include "reference/error.hpp"
#include "reference/layout.hpp"

namespace r3::sglang {

// The rows an SGLang case's forward carries per DP rank: prompt tokens for extend, requests * w
// for decode and verify.
std::vector<int64_t> forward_tokens(const Case& c);

// ceil_align(n, a): n rounded up to a multiple of a (forward_batch_info.py, prepare_mlp_sync_batch).
int64_t ceil_align(int64_t n, int64_t a);

// The bucket a decode replay of `requests` requests runs, or -1 when none is large enough.
int64_t decode_bucket(const std::vector<int64_t>& buckets, int64_t requests);

// The bucket each DP rank's decode or verify graph replays in the forward of `c` (a valid SGLang
// case), or nullopt when the forward replays no decode graph: the rule derive_step applies, without
// the rest of the step (a trace asks it for every step, to know the runner's last bucket).
std::optional<std::vector<int64_t>> replayed_decode_buckets(const Case& c);

// The capture layout of the case (cheap: the signature asks it for every failing case).
CaptureLayout capture_layout_of(const Case& c);

// The whole step. The case must be a valid SGLang case (validate() first).
Result<Step> derive_step(const Case& c);

// The most rows any capture call of the forward writes into the device buffer (the tensor, or
// the DeepEP gather of it): what the buffer must hold.
int64_t rows_written(const Step& step);

}  // namespace r3::sglang
