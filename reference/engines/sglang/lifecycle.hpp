// SGLang's request lifecycle (docs/lifecycle-contract.md 2.1 and 2.2) as a LifecycleModel
// (reference/trace/lifecycle.hpp): three versions (upstream main, sglang-miles, the fixed model)
// and the patches between them. SGLang's EngineModel hands it out (model.cpp).
//
// The pieces: lifecycle_knobs (the trace knobs), lifecycle_check and lifecycle_profile (check,
// check_profile), lifecycle_step_case (the per-step case), lifecycle_cache (a DP rank's KV pages,
// radix tree and host cache), lifecycle_batch (a step's rows per work, the tree's node order),
// lifecycle_run (the walk).
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "reference/engines/sglang/lifecycle_behaviour.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3::sglang {

const LifecycleModel& lifecycle_model();

// What version `name` does with the patches `applied` (indices into patches()) on top; nullopt
// for a name that is not one of versions().
std::optional<Behaviour> behaviour_of(std::string_view name, std::span<const int> applied);

}  // namespace r3::sglang
