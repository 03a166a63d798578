// The JSON trace format "r3fuzz-trace/1" (docs/lifecycle-contract.md, reference/trace/trace.hpp):
// read, validate and write. Reading rejects unknown keys, wrong types and out-of-range values
// naming the key's path ("requests[1].finish: \"done\" is not one of length, eos, stop, abort",
// "steps[2].run[0]: unknown key \"extnd\" ..."), refuses absurd sizes before it allocates for
// them (trace_limits below), and ends with validate_trace() (reference/trace/lifecycle.hpp), so
// the trace rules and the engine's own (its knobs among them) are named too. Parsing is
// fuzz/io/strict_json.hpp's (no duplicate keys, no NUL bytes); files go through the bounded
// reader (fuzz/io/input_file.hpp). Nothing here throws.
//
// The document, in the order the writer puts its keys:
//   format    "r3fuzz-trace/1"
//   engine    an engine's name (absent when read: the default engine; always written)
//   profile   a profile's name (optional)
//   topology  {"dp", "tp", then the engine's knobs}
//   model     {"layers", "top_k", "experts"}
//   config    {"token_budget", "chunk" (-1: off), "page", "kv_slots", "prefix_cache", "overlap",
//              "spec" (null or {"width", "tree"}), "cuda_graph" ({"decode": [sizes]}; {} or
//              absent: none), then the engine's knobs}
//   requests  [{"id" (its index), "dp", "prompt", "outputs", "max_new"?, "finish",
//               "start_len"?, "arrival"?, "resume_of"?}]
//   steps     [{"events"?: [...], "run": [...]}], run entries {"req", "extend": [a, b]},
//             {"req", "decode": q} or {"req", "verify": {"at", "accepted"}}; events, one form per
//             kind: {"hit": {"req", "len"}}, {"preempt": r}, {"abort": r},
//             {"weight_update": {"version", "flush"}}, {"offload": {"req"}}, {"restore": {"req"}},
//             {"pd_handoff": {"req"}}
//   copies    [{"step", "done_before_step"}] (optional; absent when every copy to host completes
//             in order: reference/trace/copies.hpp), one entry per line
//   note      a string (optional)
//   expect    {"impl", "verdict"} (optional)
// An engine knob is any key of "topology" or "config" besides the generic ones above: it is kept
// in Trace::knobs as "topology.KEY" / "config.KEY" with the value's JSON text; an object or a list
// is refused. Whether the engine knows the knob is its lifecycle model's call (validate_trace).
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "reference/error.hpp"
#include "reference/limits.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

// The ranges a trace's fields may take in both forms: the JSON reader refuses values outside
// them and the binary decoder folds into them (trace_binary.hpp), so every trace the JSON reader
// accepts round-trips through the binary form. Far above any trace a person or the generator
// writes, low enough that no input makes r3fuzz allocate more than its text costs.
namespace trace_limits {
inline constexpr int kMaxRequests = 4096;
inline constexpr int kMaxSteps = 100000;
inline constexpr int kMaxTokens = 65536;                   // per prompt, per outputs, max_new
inline constexpr int64_t kMaxPosition = 2 * int64_t{kMaxTokens};  // positions, hit lengths, |start_len|
inline constexpr int kMaxStepEntries = 4096;               // run entries, and events, per step
inline constexpr int kMaxDp = 64;
inline constexpr int kMaxTp = limits::kMaxTp;
inline constexpr int kMaxSpecWidth = 64;                   // spec.width, verify's accepted
inline constexpr int kMaxKnobs = 64;
inline constexpr size_t kMaxKnobText = 1024;               // bytes of a knob's key, and of its value
inline constexpr int64_t kMaxTokenId = INT32_MAX;
inline constexpr int64_t kMaxVersion = INT32_MAX;          // weight_update version
inline constexpr int64_t kMaxRows = limits::kMaxRows;      // token_budget, chunk, page, kv_slots, graph sizes
inline constexpr int kMaxGraphSizes = limits::kMaxCudagraphSizes;
inline constexpr int64_t kMaxText = limits::kMaxTextBytes;  // note, expect.impl, expect.verdict
}  // namespace trace_limits

// Parses and validates a trace from JSON text.
Result<Trace> trace_from_json_text(std::string_view text);

// Reads and validates a trace from a parsed JSON document.
Result<Trace> trace_from_json(const nlohmann::json& doc);

// The trace as a JSON document (nlohmann::json orders keys alphabetically; the text form below
// keeps the order above). Defaults are omitted: max_new when absent, start_len 0, arrival and
// resume_of when absent, empty events, no copies, an empty note, no expect.
nlohmann::json trace_to_json(const Trace& t);

// Pretty text, 2-space indent, the order above: each top-level value on one line, except the
// lists of requests and steps, one element per line. Ends with a newline.
std::string trace_to_json_text(const Trace& t);

// Reads a trace file; every error starts with the file's path.
Result<Trace> read_trace_file(const std::string& path);

// Writes trace_to_json_text(t) to `path` (a new file renamed over the name); the error names it.
Status write_trace_file(const std::string& path, const Trace& t);

// True when the document's "format" is "r3fuzz-trace/1": replay tells trace files from case files.
bool looks_like_trace(const nlohmann::json& doc);

// The rules a knob obeys in both forms: "topology.KEY" or "config.KEY", KEY not one of that
// object's generic keys, at most kMaxKnobText bytes, and a value that is a JSON scalar written as
// the writer writes it (its canonical text: `4`, `true`, `"deepep"`), so it reads back the same.
Status check_trace_knob(std::string_view key, std::string_view value);

}  // namespace r3
