// Where the case domain (case_domain.hpp) gets its choices from. A case is a sequence of
// choices, each an integer in a range the domain has already narrowed to valid values (the
// idea of Hypothesis's choice sequence and FuzzTest's domains): a seeded generator, libFuzzer's
// bytes, a bounded enumerator and an rc::Gen adapter are all Sources, so none of them restates
// what a valid case is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/generate/function_ref.hpp"
#include "fuzz/generate/rng.hpp"

namespace r3 {

// The case's fields in the order the domain draws them (case_domain.cpp resolves each one's
// constraints from the fields before it). Hints are choices that only steer toward interesting
// cases (a token shape, vLLM's default capture sizes); the value choices alone reach every case,
// so an enumerator fixes every hint at its plain value, 0.
enum class Field : uint8_t {
  tp, dp, ep, sp,                          // topology
  layers, top_k, experts, layer,           // model and captured layer
  max_num_tokens,
  token_shape,   // hint: 0 each rank on its own, 1 one rank holds every token, 2 all idle, 3 all equal
  token_holder,  // hint: the rank holding every token (shape 1)
  tokens,        // one entry per DP rank
  padding,       // 0 none, 1 dp_max, 2 cudagraph
  default_capture_sizes,  // hint: 1 takes vLLM's default CUDA-graph capture sizes
  capture_sizes,          // a strictly increasing list
  path,          // with dp > 1: 0 gathered, 1 the modular kernel's (local, or sp_shard with SP)
  monolithic,
  microbatches,
  chunked,       // 1: DP chunking on
  dp_chunk,
  metadata,      // 1: a metadata override (profile any only)
  metadata_kind, // which inconsistency: 0 wrong length, 1 local_sizes unset, 2 extra entry, 3 one entry off, 4 consistent
  metadata_edit, // the kind's own choices (which entry, which way, the value added)
  idle_dummy,
  // Appended, so that vLLM's choices keep their numbers: the engine, then SGLang's own fields
  // (an SGLang case also draws tp, dp, the model and, for extend, tokens), which its draw part
  // asks for and reads back (fuzz/engines/sglang/draw.cpp). engine is asked only where a profile
  // covers several engines and the domain does not name one (case_domain.hpp, drawn_engines).
  engine,                  // the place among the drawn engines: 0 vllm, 1 sglang
  dp_attention,
  a2a,                     // sglang::A2a
  forward,                 // sglang::ForwardKind
  spec_width,
  max_running_requests,
  chunked_prefill,         // 1: chunked prefill on (chunked_prefill_size), 0: off (-1)
  chunked_prefill_size,
  requests,                // one entry per DP rank (decode, verify)
  cuda_graph,              // 1: graphs captured
  decode_buckets,          // a strictly increasing list, in units of the bucket alignment
  prefill_graph,           // 1: a breakable prefill graph is captured too
  prefill_buckets,         // a strictly increasing list
  last_decode_bucket,      // 0: no replay yet, i + 1: bucket i
  tbo,
  // Appended: vllm-ascend's own fields (fuzz/engines/ascend/draw.cpp).
  chip,        // ascend::Chip
  runner,      // ascend::Runner
  graph,       // ascend::Graph
  lora,
  fused_mc2,
  mc2_tokens,  // B of the MC2 capacity; 0: derived
};
inline constexpr int kFieldCount = static_cast<int>(Field::mc2_tokens) + 1;

// A hint steers; the plain value 0 of every hint still leaves every case reachable.
constexpr bool is_hint(Field field) {
  return field == Field::token_shape || field == Field::token_holder || field == Field::default_capture_sizes;
}

struct Choice {
  Field field;
  size_t index = 0;  // the entry, for a list field (tokens, capture_sizes)
  int64_t lo = 0;    // lo <= hi: every value in [lo, hi] is valid given the choices before
  int64_t hi = 0;
};

// How the seeded source draws a choice: the campaign's edge-seeking distribution (0, 1, M,
// M - 1, multiples of T ...). Other sources ignore it. Its result is clamped into [lo, hi].
using SeededDraw = FunctionRef<int64_t(Rng&)>;
// The seeded distribution of a whole list (capture sizes): strictly increasing, values >= 1.
using SeededList = FunctionRef<void(Rng&, std::vector<int64_t>&)>;

class Source {
 public:
  virtual ~Source() = default;
  // A value in [choice.lo, choice.hi]; `seeded` is unset for a plain (uniform) choice.
  virtual int64_t choose(const Choice& choice, SeededDraw seeded) = 0;
  int64_t choose(const Choice& choice) { return choose(choice, SeededDraw{}); }

  // A strictly increasing list of values in [entries.lo, entries.hi] (entries.hi - entries.lo +
  // 1 >= 1): 1..fresh_count entries when drawn afresh, at most max_count when a source replays a
  // longer one. By default a count, then each entry above the one before, leaving room for the
  // rest; the seeded source draws the whole list through `seeded` instead.
  virtual void increasing_list(const Choice& entries, int fresh_count, int max_count, SeededList seeded,
                               std::vector<int64_t>& out);
};

}  // namespace r3
