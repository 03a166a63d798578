// The faults of the mutant table (reference/fault.hpp) that vLLM's capture can have, and the
// decisions a vLLM capture with one takes (docs/MUTANTS.md, "vLLM faults").
#pragma once

#include "reference/capture.hpp"
#include "reference/fault.hpp"
#include "reference/policy.hpp"

namespace r3::vllm {

bool has_fault(Fault f);
// The decision as a vLLM capture with `f` takes it, from the correct, not rejected `out`.
void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out);

// The decision of a policy model `base` (which has no all-gather) with `f`: its gather faults
// emulated in the decision (fuzz/implementations/faulty_policy.hpp).
void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out);

}  // namespace r3::vllm
