// How every routing value of an exported test names its row, and why no id a capturer can hold
// without copying it from a tensor the test handed it is ever an expected value
// (docs/SECURITY.md, "The value encoding of exported tests"). The engines' harnesses
// (fuzz/engines/NAME/export_harness.hpp) compute the same formulas in Python from the data lines
// this fixes.
//
// A row's value in top-k column k is
//     base + ((code(kind) * span_a + a) * span_r + index) * top_k + k
// with code: untouched 0, token 1, sp_padding 2, placeholder 3; a: the DP rank (the layer of an
// untouched buffer row), 0 <= a < span_a; index: the token, padded row or buffer row,
// 0 <= index < span_r; 0 <= k < top_k. A mixed-radix number, so one-to-one on that domain, with
// image [base, end()). base = experts + kFusedSharedExperts: the image lies above every routed
// expert id (0 .. E-1), every fused shared expert's id (E .. base-1) and every fill value
// (kLowestFillValue, 0). SGLang's host cache starts with values of its own below all of them:
// slot s, layer l, column k holds -((s * layers + l) * top_k + k) - 1 until written.
#pragma once

#include <cstdint>

#include "reference/error.hpp"
#include "reference/rows.hpp"

namespace r3 {

// Fused shared experts whose ids follow the routed ones in every tensor an exported SGLang test
// hands a capturer (num_fused_shared_experts). vLLM's tests reserve their ids too: vLLM fuses
// shared experts on some platforms the same way.
inline constexpr int64_t kFusedSharedExperts = 1;
// The lowest value a capturer may write of its own accord: -1 (no expert; padding). 0, the other
// common fill value, is an expert id.
inline constexpr int64_t kLowestFillValue = -1;
inline constexpr int64_t kRowKindCodes = 4;  // untouched, token, sp_padding, placeholder

// The Python harnesses' KIND_CODES.
int64_t row_kind_code(RowKind kind);

struct ValueEncoding {
  int64_t base = 0;    // experts + kFusedSharedExperts
  int64_t span_a = 0;  // max(dp, layers)
  int64_t span_r = 0;  // more than any row index, buffer row or token count of the step
  int64_t top_k = 0;
  int64_t layers = 0;
  int64_t host_slots = 0;  // the most host-cache slots a rank's test allocates (SGLang); 0: no host cache

  // The value of (kind, a, index) in column k; the arguments must lie in their spans.
  int64_t value(RowKind kind, int64_t a, int64_t index, int64_t k) const {
    return base + ((row_kind_code(kind) * span_a + a) * span_r + index) * top_k + k;
  }
  // One past the largest value: base + kRowKindCodes * span_a * span_r * top_k.
  int64_t end() const { return base + kRowKindCodes * span_a * span_r * top_k; }
  // The value an unwritten host-cache slot holds (SGLang).
  int64_t stale_host_value(int64_t slot, int64_t layer, int64_t k) const {
    return -((slot * layers + layer) * top_k + k) - 1;
  }
  int64_t lowest_host_value() const { return -(host_slots * layers * top_k); }
};

// What the encoding of one exported step depends on.
struct EncodedStep {
  int64_t experts = 0;
  int64_t dp = 0;
  int64_t layers = 0;
  int64_t top_k = 0;
  int64_t row_span = 0;    // 1 + the largest row index, buffer row (of any sizing) or count
  int64_t host_slots = 0;  // StepInputs::host_slots (SGLang: the most KV slots + 1 of a rank); 0: none
};

// The encoding, or an error when its values do not all fit the buffers' int32 (end() - 1 above
// INT32_MAX, or lowest_host_value() below INT32_MIN). Every field must be within the case limits
// (reference/limits.hpp), which keeps each product here far inside int64.
Result<ValueEncoding> value_encoding(const EncodedStep& s);

}  // namespace r3
