// SGLang's own trace knobs (Trace::knobs, JSON scalar text): the server arguments a trace sets
// beyond the engine-neutral TraceConfig, and the allowed interleaving of the overlap copy.
#pragma once

#include <cstdint>
#include <string_view>

#include "reference/engines/sglang/forward.hpp"
#include "reference/error.hpp"
#include "reference/trace/trace.hpp"

namespace r3::sglang {

enum class SpecAlgorithm : uint8_t {
  eagle,
  ngram
};  // --speculative-algorithm (EAGLE, EAGLE3, NEXTN and MTP are eagle here)
enum class PdRouter : uint8_t { none, mini_lb };  // the router in front of a P/D pair

struct LifecycleKnobs {
  bool dp_attention = false;                            // "topology.dp_attention" (default: topology.dp > 1)
  A2a a2a = A2a::none;                                  // "topology.a2a": --moe-a2a-backend
  PdRouter pd_router = PdRouter::none;                  // "config.pd_router"
  bool hicache = false;                                 // "config.hicache": --enable-hierarchical-cache
  SpecAlgorithm spec_algorithm = SpecAlgorithm::eagle;  // "config.spec_algorithm"
  bool mixed_chunk = false;                             // "config.mixed_chunk": --enable-mixed-chunk
  // "config.overlap_copy_race": under the overlap scheduler, every deferred copy to host runs after
  // the next forward has written the device buffer (docs/lifecycle-contract.md S8, N11: an
  // interleaving the streams allow; the trace picks it, the model never guesses it). The form
  // traces had before the copies record (reference/trace/copies.hpp), which now says it per step:
  // the knob stands for done_before_step = S + 2 for every step the record has no entry for
  // (lifecycle_copies.hpp). Kept so that older traces read the same; the generator draws records.
  bool overlap_copy_race = false;
};

// Every SGLang knob key, in the order errors list them.
inline constexpr std::string_view kKnobKeys =
    "config.hicache, config.mixed_chunk, config.overlap_copy_race, config.pd_router, config.spec_algorithm, "
    "topology.a2a, topology.dp_attention";

// The trace's knobs; an error names the key ("knobs.topology.a2a: ...") or lists the known keys.
Result<LifecycleKnobs> parse_knobs(const Trace& t);

// The knobs of a trace check() accepted (defaults where they do not parse).
LifecycleKnobs knobs_of(const Trace& t);

}  // namespace r3::sglang
