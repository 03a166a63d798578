// The judge the shrinker calls, built from an implementation under test. The judging mode
// (concrete or symbolic) is chosen once, for the input, by the oracle's rule
// (judge_mode_for, fuzz/oracle/judge_case.hpp), then pinned: a case shrinking below the
// concrete size limit must not change how it is judged halfway, or the bug would change under
// the shrinker.
#pragma once

#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/shrink/shrink.hpp"
#include "reference/implementation.hpp"

namespace r3 {

// Judges every case in `how`; the implementation must outlive the judge. Concrete judging
// of a case too large to run (or symbolic judging without a policy) is an Error.
CaseJudge judge_with(const Implementation& impl, JudgeMode how);

// Judges each case in the mode `mode`'s rule picks for it (judge_by_rule).
CaseJudge judge_by_rule(const Implementation& impl, Mode mode);

}  // namespace r3
