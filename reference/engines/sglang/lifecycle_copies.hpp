// SGLang's copy to host (docs/lifecycle-contract.md S5 to S8): which completion orders its
// streams allow (the CopyWindow check_profile enforces and the trace draw draws within), and
// when each step's copy lands, the trace's "copies" record (reference/trace/copies.hpp) read
// together with the older knob config.overlap_copy_race.
#pragma once

#include <vector>

#include "reference/engines/sglang/lifecycle_knobs.hpp"
#include "reference/trace/copies.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::sglang {

// Sync mode: every copy in order. Overlap mode: a step's copy may land after the next forward
// but before the one after it (latest done_before_step S + 2). A step with no rows carries no
// copy (in order).
CopyWindow copy_window(const Trace& t, const Timeline& timeline);

// done_before_step of every step's copy: the record's entry; else, when the trace sets the knob
// config.overlap_copy_race (the form traces had before the record: "every deferred copy loses the
// race"), S + 2 where the trace has that step; else S + 1.
std::vector<int> copy_completions(const Trace& t, const LifecycleKnobs& knobs);

}  // namespace r3::sglang
