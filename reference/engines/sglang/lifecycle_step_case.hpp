// One step of an SGLang trace as the one-step case its per-step policy judges (the SGLang forward
// of forward.hpp), and what that forward pads each DP rank's batch to.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::sglang {

// The case of step `step`, valid (validate.cpp) and in `profile` (profile.cpp), or nullopt:
//  - the forward: extend when the step extends anything (a mixed batch is an extend forward:
//    ForwardMode.MIXED is an extend mode), verify when every row is a verify's (spec_width =
//    config.spec.width + 1: the input and its drafts), else decode; a step mixing decode and
//    verify rows, or verify rows into an extend, has no case;
//  - counts: tokens (extend) or requests (decode, verify) per DP rank, from StepView::rows;
//  - chunked_prefill_size = config.chunk; max_prefill_tokens and max_running_requests =
//    config.token_budget (the trace's M; Case::max_num_tokens is a vLLM field SGLang leaves at 1);
//  - cuda_graph.decode = config.cuda_graph_decode, and last_decode_bucket the bucket the runner
//    replayed last in an earlier step (when every rank replayed the same one);
//  - dp_attention and a2a from the knobs; layer 0; no TBO, no prefill graph.
std::optional<Case> step_case_in(const Trace& t, const Timeline& timeline, int step, Profile profile);
// Every step's, in one pass: the last replayed bucket is carried forward rather than searched
// for backward from each step, so a trace's cases cost time linear in its length.
std::vector<std::optional<Case>> step_cases_in(const Trace& t, const Timeline& timeline, Profile profile);

// Rows of each DP rank's batch in the forward of `step`: its real rows plus the decode graph's or
// DP attention's padding (layout.cpp, derive_forward), or just the real rows when the step has
// no case.
std::vector<int64_t> padded_rows(const Trace& t, const Timeline& timeline, int step);

// The profile a trace runs under: its own when it is one of SGLang's, else upstream's.
Profile trace_profile(const Trace& t);

}  // namespace r3::sglang
