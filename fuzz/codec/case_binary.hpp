// The binary case format: the bytes libFuzzer mutates. Byte 0 is the version, which selects the
// engine: each engine's codec owns its versions (engine_codec.hpp), and the rest of the bytes
// are its layout (1 for vLLM, the base case below; 2 and 3 for SGLang, in
// fuzz/engines/sglang/codec.hpp). The base case (base_codec.hpp), all integers LEB128:
//
//   byte 0   version
//   byte 1   flags:  bit 0 ep, 1 sp, 2 monolithic, 3 dp_chunk present,
//                    4 metadata.num_tokens_across_dp given, 5 metadata.local_sizes given,
//                    6 local_sizes non-null (ignored unless bit 5), 7 metadata present
//   byte 2   kinds:  bits 0-1 path (single, gathered, local, sp_shard),
//                    bits 2-3 padding (none, dp_max, cudagraph; 3 folds to none),
//                    bit 4 note present, bit 5 expect present, bit 6 idle_dummy,
//                    bit 7 profile present (recorded only: fuzz targets take theirs from R3FUZZ_PROFILE)
//   varints  dp-1, tp-1, layers-1, top_k-1, experts-1, M-1, layer, microbatches-1,
//            [dp_chunk-1], tokens[0..dp), [count-1, first size-1, then gaps-1 (cudagraph)],
//            [count, entries (num_tokens_across_dp)], [count, entries (local_sizes)], then the
//            trailer every engine shares (binary_io.hpp): [length, bytes (note)],
//            [3 x (length, bytes): impl, verdict, severity (expect)], [profile: Profile::code(),
//            0 vllm, 1 vllm-legacy, 2 any, 3 sglang, 4 sglang-miles with the built-in engines]
//
// Decoding folds every value into the range its BinaryLimits allow (value = lo + raw mod
// (hi - lo + 1)), so no byte string asks for a huge case; then it runs validate(). Every byte
// string therefore decodes to a valid case or is rejected (truncated, trailing bytes, a wrong
// version, an over-long varint, invalid text, or a case validate() refuses). Encoding writes the
// canonical bytes, so decode(encode(c)) == c for every valid case inside the limits, and
// encode(decode(x)) is a fixed point of encode . decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

// The largest value each field may decode to.
struct BinaryLimits {
  int max_dp = 1;
  int max_tp = 1;
  int max_layers = 1;
  int max_top_k = 1;
  int max_experts = 1;
  int64_t max_rows = 1;            // M; tokens fold into [0, M]
  int max_cudagraph_sizes = 1;
  int64_t max_cudagraph_size = 1;  // the largest capture size (may exceed M: corner case 7 (docs/layout-contract.md section 8))
  int max_microbatches = 1;
  int64_t max_dp_chunk = 1;
  int max_metadata_entries = 0;
  int64_t max_metadata_value = 0;
  size_t max_text = 0;             // bytes of the note and of each expect string
};

// The fuzz targets' limits: every case they decode is small enough for concrete mode on the host
// (provenance_fits() holds, a run takes microseconds) yet reaches every path and corner case:
// D and T up to 8, M up to 64, capture sizes up to 2M, E up to 2^20 (narrow storage).
BinaryLimits concrete_binary_limits();

// validate()'s own ranges: every valid case round-trips. Used to convert corpus files.
BinaryLimits full_binary_limits();

// The canonical bytes of a valid case (precondition: validate(c) is ok); no bytes for a case of
// an engine without a codec.
std::vector<uint8_t> case_to_binary(const Case& c);

// Decodes and validates; errors say what is wrong and at which byte offset.
Result<Case> case_from_binary(std::span<const uint8_t> bytes, const BinaryLimits& limits = concrete_binary_limits());

// The one decoding of a fuzz input file (issue 15 item 13): what `seed --to-binary` writes,
// `seed --to-json` reads back, `shrink --from-bytes` shrinks and the differential target runs.
// Full limits, so the canonical bytes of every valid case (the whole corpus) decode to that very
// case and nothing is folded behind the user's back.
Result<Case> case_from_fuzz_input(std::span<const uint8_t> bytes);

// True when every field of `c` lies within `limits` (the note and "expect" aside: they change no
// behaviour), i.e. `c` encodes and decodes unchanged under them. The differential target runs
// only cases that fit the concrete limits, so every input it runs means the same case to
// case_from_fuzz_input().
bool fits_binary_limits(const Case& c, const BinaryLimits& limits);

}  // namespace r3
