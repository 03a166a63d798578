// The rules an SGLang trace obeys beyond build_timeline()'s (LifecycleModel::check), and the
// traces each SGLang version never runs (LifecycleModel::check_profile).
#pragma once

#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::sglang {

// The trace format's SGLang rules: its knobs (keys and values) and page-aligned hits. Errors
// name the knob key or the step and event.
Status check_lifecycle_trace(const Trace& t, const Timeline& timeline);

// Why the SGLang version of `profile` never runs `t`: a start-up refusal of its knobs, or a step
// its scheduler never makes. `any` reads as upstream. Each error names the rule's source.
Status check_lifecycle_profile(const Trace& t, const Timeline& timeline, Profile profile);

}  // namespace r3::sglang
