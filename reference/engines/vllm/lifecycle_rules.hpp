// vLLM's rules for a trace (LifecycleModel::check, check_profile) and the one-step case of a
// trace step for the per-step policies (LifecycleModel::step_case).
#pragma once

#include <optional>
#include <string_view>

#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::vllm {

// The knobs a vLLM trace takes, with their values (the first is the default).
inline constexpr std::string_view kKnobKvConnector = "config.kv_connector";
inline constexpr std::string_view kKnobSpecAdaptive = "config.spec_adaptive";

// The KV connector the trace's engine runs with ("none" when the knob is absent).
std::string_view kv_connector(const Trace& t);

// The trace's own shape for vLLM: knobs, whole-block hits, chain speculation, the KV pool,
// and KV moves that need a connector (lifecycle_check.cpp).
Status check_trace(const Trace& t, const Timeline& timeline);
// What profile `profile`'s vLLM refuses at start-up, and the schedules its scheduler never
// makes (lifecycle_check.cpp).
Status check_trace_profile(const Trace& t, const Timeline& timeline, Profile profile);

// The per-step case of step `step` (lifecycle_step_case.cpp).
std::optional<Case> trace_step_case(const Trace& t, const Timeline& timeline, int step);

}  // namespace r3::vllm
