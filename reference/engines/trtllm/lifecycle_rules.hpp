// TensorRT-LLM's rules for a trace (LifecycleModel::check, check_profile) and the one-step case
// of a trace step for the per-step policies (LifecycleModel::step_case).
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::trtllm {

// The knobs a TensorRT-LLM trace takes.
inline constexpr std::string_view kKnobPp = "topology.pp";                 // pipeline-parallel size, 1 by default
inline constexpr std::string_view kKnobMoeBackend = "config.moe_backend";  // "cutlass" by default
// MoE backends: CUTLASS (the default) and DeepGemm route in Python (separated routing); the
// TRTLLMGen backend computes top-k inside its kernel (route_capture.py module docstring and
// assert_capturable @ 06a976ce, aa94b01).
inline constexpr std::array<std::string_view, 3> kMoeBackends = {"cutlass", "deepgemm", "trtllmgen"};

int pipeline_parallel(const Trace& t);       // topology.pp, 1 when absent
std::string_view moe_backend(const Trace& t);  // config.moe_backend, "cutlass" when absent

Status check_trace(const Trace& t, const Timeline& timeline);
Status check_trace_profile(const Trace& t, const Timeline& timeline, Profile profile);
std::optional<Case> trace_step_case(const Trace& t, const Timeline& timeline, int step);

}  // namespace r3::trtllm
