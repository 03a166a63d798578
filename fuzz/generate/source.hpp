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
#include "reference/engine.hpp"

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
  // Appended, so that vLLM's choices keep their numbers: the engine, asked only where a profile
  // covers several engines and the domain does not name one (case_domain.hpp, drawn_engines).
  engine,                  // the place among the drawn engines
  // Slots for an engine's own fields (those the case format does not hold): each engine names
  // the slots its draw part asks for in its own folder (fuzz/engines/NAME) and describes them
  // through EngineDraw::own_fields (engine_draw.hpp), so that generic code never names them. Two
  // engines' slots share numbers; what a slot means is the engine's of the case at hand.
  own_0, own_1, own_2, own_3, own_4, own_5, own_6, own_7,
  own_8, own_9, own_10, own_11, own_12, own_13, own_14, own_15,
};
inline constexpr int kFieldCount = static_cast<int>(Field::own_15) + 1;
// The fields every engine shares, the case format's own and the engine choice: Field::tp up to
// Field::engine.
inline constexpr int kGenericFieldCount = static_cast<int>(Field::engine) + 1;
inline constexpr int kOwnFieldCount = kFieldCount - kGenericFieldCount;

// A slot number an engine's field constant names that has no slot (an engine with more than
// kOwnFieldCount fields needs more slots above): not constexpr, so such a constant does not compile.
inline void own_field_out_of_range() { __builtin_trap(); }

// Slot k of an engine's own fields.
constexpr Field own_field(int k) {
  if (k < 0 || k >= kOwnFieldCount) own_field_out_of_range();
  return static_cast<Field>(kGenericFieldCount + k);
}
constexpr bool is_own(Field field) { return static_cast<int>(field) >= kGenericFieldCount; }
constexpr int own_index(Field field) { return static_cast<int>(field) - kGenericFieldCount; }
static_assert(own_field(kOwnFieldCount - 1) == Field::own_15 && kOwnFieldCount == 16);

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

  // The engine whose case the choices after it draw: draw() says so once it has picked the
  // engine, before the engine's part asks anything. What an own field's slot means (its part,
  // whether it has an entry per rank, what a parent recorded for it) is that engine's; a source
  // that replays cases needs it (replay_source.hpp), the others ignore it.
  virtual void drawing(Engine engine) { (void)engine; }

  // A strictly increasing list of values in [entries.lo, entries.hi] (entries.hi - entries.lo +
  // 1 >= 1): 1..fresh_count entries when drawn afresh, at most max_count when a source replays a
  // longer one. By default a count, then each entry above the one before, leaving room for the
  // rest; the seeded source draws the whole list through `seeded` instead.
  virtual void increasing_list(const Choice& entries, int fresh_count, int max_count, SeededList seeded,
                               std::vector<int64_t>& out);
};

}  // namespace r3
