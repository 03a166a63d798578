// SGLang's own fields of the case domain: the choices its draw (draw.hpp) asks for beyond the
// case format's own (it also draws tp, dp, the model and, for extend, tokens). Each is a slot of
// Field's own ones (fuzz/generate/source.hpp); the draw part describes them to generic code
// (EngineDraw::own_fields), which never names them.
#pragma once

#include <array>

#include "fuzz/generate/case_domain.hpp"
#include "fuzz/generate/source.hpp"

namespace r3::sglang::field {

inline constexpr Field dp_attention = own_field(0);
inline constexpr Field a2a = own_field(1);                   // sglang::A2a
inline constexpr Field forward = own_field(2);               // sglang::ForwardKind
inline constexpr Field spec_width = own_field(3);
inline constexpr Field max_running_requests = own_field(4);
inline constexpr Field chunked_prefill = own_field(5);       // 1: chunked prefill on (chunked_prefill_size), 0: off (-1)
inline constexpr Field chunked_prefill_size = own_field(6);
inline constexpr Field requests = own_field(7);              // one entry per DP rank (decode, verify)
inline constexpr Field cuda_graph = own_field(8);            // 1: graphs captured
inline constexpr Field decode_buckets = own_field(9);        // a strictly increasing list, in units of the bucket alignment
inline constexpr Field prefill_graph = own_field(10);        // 1: a breakable prefill graph is captured too
inline constexpr Field prefill_buckets = own_field(11);      // a strictly increasing list
inline constexpr Field last_decode_bucket = own_field(12);   // 0: no replay yet, i + 1: bucket i
inline constexpr Field tbo = own_field(13);

// Each in the part that plays its role in a vLLM case: the forward kind is where capture sees
// the tensor (path), the graphs pad (padding), TBO makes the calls. Requests, like tokens, have
// an entry per DP rank.
inline constexpr std::array<FieldInfo, 14> kInfos = {{
    {dp_attention, "dp_attention", CasePart::topology},
    {a2a, "a2a", CasePart::topology},
    {forward, "forward", CasePart::path},
    {spec_width, "spec_width", CasePart::path, false, 1},
    {max_running_requests, "max_running_requests", CasePart::max_num_tokens, false, 1},
    {chunked_prefill, "chunked_prefill", CasePart::max_num_tokens},
    {chunked_prefill_size, "chunked_prefill_size", CasePart::max_num_tokens, false, 1},
    {requests, "requests", CasePart::tokens, true},
    {cuda_graph, "cuda_graph", CasePart::padding},
    {decode_buckets, "decode_buckets", CasePart::padding, false, 1},
    {prefill_graph, "prefill_graph", CasePart::padding},
    {prefill_buckets, "prefill_buckets", CasePart::padding, false, 1},
    {last_decode_bucket, "last_decode_bucket", CasePart::padding},
    {tbo, "tbo", CasePart::calls},
}};

}  // namespace r3::sglang::field
