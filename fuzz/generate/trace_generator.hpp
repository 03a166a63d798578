// The trace generator: draws a random serving trace (reference/trace/trace.hpp) that the
// profile's engine can really produce, the same one for the same random state. It draws the
// shape (topology, model, config, the engine's knobs) and requests whose prompts share prefixes,
// then runs the engine's scheduler model (engine_trace_draw.hpp) step by step to decide each
// step's events and work. A trace is valid by construction; the draw still checks it
// (validate_trace and the engine's check_profile) and returns the failure as an error: a
// generator bug, never a reason to draw again.
#pragma once

#include <vector>

#include "fuzz/generate/rng.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/trace/copies.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

struct TraceDrawLimits {
  int max_requests = 6;
  int max_steps = 24;
  int max_prompt = 12;   // prompt tokens of a drawn request (a resume's prompt may be longer)
  int max_outputs = 6;
  int max_dp = 2;
  int max_tp = 2;
  int max_layers = 2;
  int max_top_k = 2;
  int max_experts = 16;
  int max_spec_width = 3;
};

// One trace of the profile's engine; under Profile::any(), of an engine that has both a
// lifecycle model and a trace part, chosen from `rng`.
Result<Trace> draw_trace(Rng& rng, Profile profile, const TraceDrawLimits& limits = {});

// A copies record within `window` (reference/trace/copies.hpp), replacing t.copies: with no step
// able to land late, none; else one trace in five has every copy as late as the window allows,
// two in five some copies late (each at a drawn step within its window), the rest none.
void draw_copies_within(Rng& rng, const CopyWindow& window, Trace& t);

// The same with the requests given (r3fuzz seed --serving-trace): their prompts, outputs,
// finishes and arrivals kept (an abort finish is served to its length), each on DP rank dp mod
// the drawn dp; the shape, the engine's knobs and its scheduler's decisions drawn from `rng`.
// Requests the trace's max_steps leave unfinished return nothing.
Result<Trace> schedule_requests(Rng& rng, Profile profile, const std::vector<TraceRequest>& requests,
                                const TraceDrawLimits& limits = {});

}  // namespace r3
