// vllm-ascend's faults of the mutant table (reference/fault.hpp, docs/MUTANTS.md): bugs in the
// slots of the branch-5 TP all-gather, each a mismatch between what prepare left on a TP rank
// (layout.cpp) and the slot the capture gives it. A rank whose input does not fit its slot fails
// the all_gather (raised here, as the main model raises its own mismatch); its peers gather.
#pragma once

#include "reference/capture.hpp"
#include "reference/fault.hpp"
#include "reference/policy.hpp"

namespace r3::ascend {

bool has_fault(Fault f);
// The decision of a capture with `f`, from the correct, not rejected `out`.
void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out);
// A policy model `base` with `f`.
void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out);

}  // namespace r3::ascend
