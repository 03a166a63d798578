// The differential oracle: an implementation's outcome beside the reference capturer's.
#pragma once

#include <string_view>

#include "fuzz/oracle/verdict.hpp"
#include "reference/case.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3 {

// Judges a policy from shapes alone: its decisions are applied to row ranges, not data.
Judgement judge_symbolic(const Case& c, const Step& step, const CapturePolicy& policy, std::string_view impl_name);

// The case-level verdict from rank verdicts (shared by the symbolic and concrete judges), in
// design.md's order: capacity, then a missed rejection, then a collective mismatch, then the
// first failing rank with TP rank 0 (failure), then any failing rank (latent), else pass.
void conclude(Judgement& j, const Case& c, const Step& step);

}  // namespace r3
