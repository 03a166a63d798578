// The trace shrinker: from a failing trace (reference/trace/trace.hpp) to the smallest readable
// trace that still fails, ideally one request and one step. Greedy passes, in the order that
// removes most first, each repeated while one of its candidates is kept, until a whole round of
// them keeps nothing:
//   drop a request (its work and events with it, later ids renumbered), then the steps left empty;
//   drop an event (a hit's request then extends from 0, a preempt's recompute starts where the
//     request stood, an offload goes with its restore);
//   drop a step (the copies record's later steps move down with it); drop one work entry (a
//     lagging row); drop a copies entry, then move one's done_before_step a step sooner (toward
//     in order); merge an extend into the same request's previous extend;
//   shorten a request's outputs (its last output and the forwards after the one that sampled the
//     new last; under overlap the next decode stays, as its lagging row); shorten a hit by one
//     position (its request extends from one position earlier); cut a prompt's last token (later
//     positions of that request move down by one);
//   features to their plain value: no spec without a verify, no overlap without a lagging row (and no copies record),
//     no CUDA graphs, no prefix cache without a hit, no chunking, page 1, kv_slots 64, finish
//     length, no explicit max_new, start_len 0, no arrival;
//   dp 1 (every request on rank 0), one rank fewer, a request moved to rank 0; tp 1, then half;
//   drop a knob; layers 1, top_k 1, experts = top_k;
//   token ids relabelled 1, 2, ... by first appearance (equal tokens stay equal, so prefix
//     sharing and resumed prompts survive).
// A candidate is kept only when it is a valid trace (validate_trace), the profile's engine runs it
// (LifecycleModel::check_profile) and `still_fails` holds for it; a candidate already refused is
// never tried again. The predicate sees only such candidates.
//
// Deterministic for a deterministic predicate: same input, same output. Every kept candidate
// removes something or moves a field to its plain value, and `max_attempts` bounds the work
// whatever the predicate does.
#pragma once

#include <functional>

#include "reference/engine.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

struct TraceShrinkResult {
  Trace trace;       // the smallest failing trace found (the input when nothing smaller fails)
  int attempts = 0;  // candidates checked (validated, then given to the predicate when valid)
  int accepted = 0;  // candidates kept
};

// Shrinks `failing`, which is taken to fail already (the predicate is not asked about it). The
// note and the expectation describe the input, not the bug: the result has neither. An input
// that is not a valid trace inside `profile` comes back as it is, with no attempt.
TraceShrinkResult shrink_trace(const Trace& failing, Profile profile,
                               const std::function<bool(const Trace&)>& still_fails, int max_attempts = 2000);

}  // namespace r3
