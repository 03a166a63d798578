// The judge the shrinker calls, built from an implementation under test. The judging mode
// (concrete or symbolic) is chosen once, for the input, by the campaign's rule
// (fuzz/campaign/judge_case.hpp), then pinned: a case shrinking below the concrete size limit
// must not change how it is judged halfway, or the bug would change under the shrinker.
#pragma once

#include "fuzz/campaign/judge_case.hpp"
#include "fuzz/shrink/shrink.hpp"
#include "reference/implementation.hpp"

namespace r3 {

// The mode the campaign's rule picks for `impl` on `c`. Error when none can judge it: no
// policy to judge symbolically and the case is too large to run concretely.
Result<JudgeMode> judge_mode_for(const Implementation& impl, const Case& c, Mode mode = Mode::mixed);

// Judges every case in `how`; the implementation must outlive the judge. Concrete judging
// of a case too large to run (or symbolic judging without a policy) is an Error.
CaseJudge judge_with(const Implementation& impl, JudgeMode how);

}  // namespace r3
