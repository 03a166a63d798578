// From cases to device work and back: plan_case() appends one case's buffers, tensors,
// gathers and kernel jobs to a DevicePlan (so a batch shares every launch);
// collect_outcome() cuts the case's guarded images out of the runner's arenas.
#pragma once

#include <optional>
#include <vector>

#include "gpu/detail/device_plan.hpp"
#include "gpu/gpu_options.hpp"
#include "reference/implementation.hpp"
#include "reference/policy.hpp"

namespace r3::gpu::detail {

struct PlanSettings {
  const CapturePolicy* policy = nullptr;
  Selection selection = Selection::host_decision;
  Fault fault = Fault::none;
};

struct PlannedRank {
  int dp = 0;
  int tp = 0;
  std::vector<CaptureDecision> calls;
  BufferJob capture;                // in arena32
  std::optional<BufferJob> replay;  // in arena16, or arena32 when replay_bits is 32
};

struct PlannedCase {
  Allocation allocation;
  std::vector<PlannedRank> ranks;  // D*T, DP-major
  std::vector<BufferJob> gathered;  // all-gatherv outputs, whose guards the pipeline checks itself
};

// The buffers the pipeline allocates: the policy's, changed by the replay faults, with
// 32-bit replay storage when expert ids need it (unless the narrow-int16 fault).
Allocation gpu_allocation(const Case& c, const CapturePolicy& policy, Fault fault);

// The decision as the faulty pipeline applies it (no change for Fault::none).
void apply_decision_fault(Fault fault, const CaptureCall& call, int64_t received_rows, CaptureDecision& decision);

// Errors (nothing appended): provenance values cannot encode the case, or it is too large.
Result<PlannedCase> plan_case(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan);

// The base planner's work for one step whose allocation `out` already holds: each call's tensors
// and receipts as the step states them (the gathered path's all-gatherv, TP slices and parts, the
// TP all-gather a decision reads). An engine planner whose step is laid out in those terms, with
// only its decisions reading Step::engine_step, delegates to it.
void plan_base_step(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan, PlannedCase& out);

// Error when an all-gatherv output's guard rows were damaged (a pipeline bug, not a verdict).
// The outcome takes the planned decisions over.
Result<ConcreteOutcome> collect_outcome(PlannedCase&& planned, const DeviceResult& result);

}  // namespace r3::gpu::detail
