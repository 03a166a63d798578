// The SGLang engine's case codec (fuzz/codec/engine_codec.hpp): an SGLang case (engine "sglang";
// docs/layout-contract.md section 11) in JSON (codec_json.cpp) and in the binary format
// (codec_binary.cpp), versions 2 and 3, all integers LEB128:
//
//   byte 0   version (2)
//   byte 1   flags:  bit 0 dp_attention, 1 tbo, 2 cuda_graph present, 3 last_decode_bucket present,
//                    4 note present, 5 expect present, 7 chunked prefill on
//   byte 2   kinds:  bits 0-3 a2a (folded mod 9), bits 4-5 forward (extend, decode, verify; 3 folds
//                    to extend), bit 6 profile present
//   varints  dp-1 (dp-2 with dp_attention), tp-1, layers-1, top_k-1, experts-top_k, layer,
//            max_running_requests-1, chunked_prefill_size-1 or max_prefill_tokens-1, [spec_width-2],
//            counts[0..dp) (tokens for extend, requests otherwise),
//            [decode buckets: count, first, gaps-1, in units of the bucket alignment;
//             prefill buckets the same in tokens; [the last bucket's index]], note, expect, profile
//            (the trailer every engine shares, fuzz/codec/binary_io.hpp)
//
// Version 2 has no room for max_prefill_tokens when chunked prefill is on: it decodes as
// SGLang's default, 16384. Version 3 is version 2 with max_prefill_tokens-1 right after
// chunked_prefill_size-1 when chunked prefill is on (flags bit 7); without chunking it is
// version 2 byte for byte but the version. Encoding writes version 3 only for a case version 2
// cannot carry (chunked prefill on and max_prefill_tokens not 16384), so every case version 2
// carried keeps its bytes, and every version 2 input decodes as it always did.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "fuzz/codec/binary_io.hpp"
#include "fuzz/codec/case_binary.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3::sglang {

inline constexpr uint8_t kBinaryVersion = 2;   // SGLang cases
inline constexpr uint8_t kBinaryVersion3 = 3;  // SGLang cases with max_prefill_tokens and chunking

// JSON (codec_json.cpp): the keys in the order; validate() is the caller's.
Result<Case> read_case_document(const nlohmann::json& doc);
nlohmann::ordered_json case_document(const Case& c);

// Binary (codec_binary.cpp): the bytes after the version byte, and the version byte followed by them.
Result<Case> decode_case(BinaryReader& r, const BinaryLimits& lim, uint8_t version);
void encode_case(BinaryWriter& w, const Case& c);

}  // namespace r3::sglang
