// The trace case: a serving trace, step by step, with the requests it serves, as the format
// "r3fuzz-trace/1" (docs/lifecycle-contract.md and docs/TRACES.md) writes it. Plain data: the
// rules a trace obeys are checked by build_timeline() (timeline.hpp) and by its engine's
// lifecycle model (lifecycle.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/trace/copies.hpp"

namespace r3 {

enum class Finish { length, eos, stop, abort };

struct TraceRequest {
  int id = 0;
  int dp = 0;                    // the DP rank that serves it
  std::vector<int32_t> prompt;   // token ids
  std::vector<int32_t> outputs;  // what the sampler returned, in order (the stop token last for eos)
  std::optional<int64_t> max_new;  // absent: outputs.size(); 0 makes a prefill-only request
  Finish finish = Finish::length;
  int64_t start_len = 0;         // SGLang routed_experts_start_len, vLLM routed_experts_prompt_start
  std::optional<int> arrival;    // the first step that may schedule it
  std::optional<int> resume_of;  // the aborted request whose prompt and outputs form this prompt
  int64_t max_new_or_default() const { return max_new.value_or(static_cast<int64_t>(outputs.size())); }
  bool operator==(const TraceRequest&) const = default;
};

// What one request forwards in one step, in batch order.
struct Work {
  enum class Kind : uint8_t { extend, decode, verify };
  Kind kind = Kind::extend;
  int req = 0;
  int64_t lo = 0;     // extend: [lo, hi); decode and verify: the input position (hi = lo + 1)
  int64_t hi = 0;
  int accepted = 0;   // verify: drafts kept, of config.spec.width
  bool operator==(const Work&) const = default;
};

struct TraceEvent {
  enum class Kind : uint8_t { hit, preempt, abort, weight_update, offload, restore, pd_handoff };
  Kind kind = Kind::hit;
  int req = -1;        // every kind but weight_update
  int64_t len = 0;     // hit
  int version = 0;     // weight_update
  bool flush = false;  // weight_update
  bool operator==(const TraceEvent&) const = default;
};

struct TraceStep {
  std::vector<TraceEvent> events;  // before the forward
  std::vector<Work> run;
  bool operator==(const TraceStep&) const = default;
};

struct SpecConfig {
  int width = 1;     // k drafts per verify
  bool tree = false;
  bool operator==(const SpecConfig&) const = default;
};

struct TraceConfig {
  int64_t token_budget = 8;  // M: rows a DP rank forwards in one step at most
  int64_t chunk = -1;        // chunked prefill size, -1 for off
  int64_t page = 1;          // KV block size
  int64_t kv_slots = 64;
  bool prefix_cache = false;
  bool overlap = false;      // async or overlap scheduling
  std::optional<SpecConfig> spec;
  std::vector<int64_t> cuda_graph_decode;  // decode graph batch sizes, increasing (empty: no graphs)
  bool operator==(const TraceConfig&) const = default;
};

// An engine's own knobs ("topology.a2a", "config.hicache"), as JSON scalar text: true, 4,
// "deepep". The engine's lifecycle model says which it takes (LifecycleModel::check_knobs).
using TraceKnobs = std::map<std::string, std::string, std::less<>>;

// A regression trace's documented outcome.
struct TraceExpectation {
  std::string impl;
  std::string verdict;  // a trace verdict (trace_verdict.hpp), "pass" for none
  bool operator==(const TraceExpectation&) const = default;
};

struct Trace {
  Engine engine;
  std::optional<Profile> profile;
  int dp = 1;
  int tp = 1;
  ModelShape model;
  TraceConfig config;
  TraceKnobs knobs;
  std::vector<TraceRequest> requests;  // ids 0..n-1, in order
  std::vector<TraceStep> steps;
  // Steps whose copy to host completes out of order (copies.hpp); empty: every copy in order.
  std::vector<CopyCompletion> copies;
  std::string note;
  std::optional<TraceExpectation> expect;
  bool operator==(const Trace&) const = default;
};

inline constexpr std::string_view kTraceFormat = "r3fuzz-trace/1";

std::string_view to_string(Finish finish);
Result<Finish> parse_finish(std::string_view text);  // names every valid text
std::string_view to_string(Work::Kind kind);
std::string_view to_string(TraceEvent::Kind kind);
Result<TraceEvent::Kind> parse_event_kind(std::string_view text);

// A knob's value, or `fallback` when the trace does not set it.
std::string_view knob(const Trace& t, std::string_view key, std::string_view fallback);
bool knob_is_true(const Trace& t, std::string_view key);
// A string knob's word: its JSON text ("deepep", quotes included) without the quotes; any other
// text as it is.
std::string_view knob_word(std::string_view text);

}  // namespace r3
