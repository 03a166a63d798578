// The binary trace format: "r3fuzz-trace/1" (trace_json.hpp) as the bytes a libFuzzer-style
// mutator works on and a compact file. All integers are LEB128 varints (binary_io.hpp), written
// relative to their field's lower bound; [x] is present only when its flag says so:
//
//   byte 0   version: kTraceBinaryVersion ('T', apart from the case format's versions 1 to 3)
//   byte 1   flags: bit 0 prefix_cache, 1 overlap, 2 spec present, 3 spec.tree, 4 profile present,
//            5 note present, 6 expect present (bit 7 is ignored)
//   varints  engine (its registry index), dp-1, tp-1, layers-1, top_k-1, experts-1,
//            token_budget-1, chunk (0: off, -1 in the trace), page-1, kv_slots-1, [spec.width-1],
//            the number of decode graph sizes, then each size-1,
//            the number of knobs, then each: object (0 topology, 1 config), KEY, value text
//            (texts are a length then UTF-8 bytes; the knob is "object.KEY"),
//            the number of requests, then each:
//              a byte: bits 0-1 finish (length, eos, stop, abort), bit 2 max_new present,
//                3 start_len present, 4 arrival present, 5 resume_of present;
//              dp, the prompt's length and tokens, the outputs' length and tokens, [max_new],
//              [start_len + kMaxPosition], [arrival], [resume_of]
//            the number of steps, then each:
//              the number of events, then each: kind (hit, preempt, abort, weight_update,
//                offload, restore, pd_handoff), then req and len (hit), version and flush
//                (weight_update) or req (the others);
//              the number of run entries, then each: kind (extend, decode, verify), req, lo, then
//                hi (extend) or accepted (verify)
//            [profile: Profile::code()], [note text], [expect.impl text, expect.verdict text]
//   copies   an optional trailing section, present exactly when the trace has a copies record
//            (reference/trace/copies.hpp): the number of entries - 1, then each entry's step and
//            done_before_step. It has no flag: a decoder reads it when bytes are left after the
//            trailer, so every byte string that decoded before the section existed (none had bytes
//            left over) decodes to the same trace, and the version byte stays 'T'.
//
// Decoding folds every value into the range trace_limits allows (value = lo + raw mod (hi - lo
// + 1)), a request's dp into the trace's ranks and every request reference into its requests,
// so every byte string decodes to a trace or an error, never to an absurd allocation: each count
// is read before what it counts and nothing is reserved ahead of the bytes. Then every byte must
// have been read, the knobs must obey check_trace_knob(), and validate_trace() runs. The trace
// JSON reader (with validate_trace) refuses every value outside these ranges, so
// decode_trace(encode_trace(t)) == t for every trace that reads from JSON.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reference/error.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

inline constexpr uint8_t kTraceBinaryVersion = 'T';

// Decodes and validates; errors name the byte offset ("binary trace, byte 12: ...") or the rule.
Result<Trace> decode_trace(std::span<const uint8_t> bytes);

// The canonical bytes of a valid trace (precondition: every value within trace_limits).
std::vector<uint8_t> encode_trace(const Trace& t);

}  // namespace r3
