// vllm-ascend's faults of the mutant table (reference/fault.hpp, docs/MUTANTS.md): bugs in the
// slots of the branch-5 TP all-gather, each a mismatch between what prepare left on a TP rank
// (layout.cpp) and the slot the capture gives it. A rank whose input does not fit its slot fails
// the all_gather (raised here, as the main model raises its own mismatch); its peers gather.
#pragma once

#include <span>

#include "reference/capture.hpp"
#include "reference/fault.hpp"
#include "reference/policy.hpp"

namespace r3::ascend {

// vllm-ascend's own faults (docs/MUTANTS.md, "vllm-ascend faults"): the branch-5 TP all-gather's slots.
// alltoall-floor-first: the ALLTOALL gather's slots cut floor-sized first (tensor_split's order swapped).
inline constexpr Fault kAlltoallFloorFirst = own_fault("alltoall-floor-first");
// mc2-own-count: the MC2 gather's slots sized from the rank's own count, not the step's largest.
inline constexpr Fault kMc2OwnCount = own_fault("mc2-own-count");

// Their rows of the mutant table, in that order.
std::span<const FaultEntry> own_faults();

bool has_fault(Fault f);
// The decision of a capture with `f`, from the correct, not rejected `out`.
void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out);
// A policy model `base` with `f`.
void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out);

}  // namespace r3::ascend
