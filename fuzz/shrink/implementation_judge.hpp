// The judge the shrinker calls, built from an implementation under test: symbolic when the
// implementation has a policy (production sizes cost nothing), concrete otherwise (or when
// asked: value faults such as narrow-int16 show only in concrete buffers).
#pragma once

#include "fuzz/shrink/shrink.hpp"
#include "reference/implementation.hpp"

namespace r3 {

enum class JudgeMode { symbolic_when_possible, concrete };

// The implementation must outlive the returned judge.
CaseJudge judge_with(const Implementation& impl, JudgeMode mode = JudgeMode::symbolic_when_possible);

}  // namespace r3
