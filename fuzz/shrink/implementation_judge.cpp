#include "fuzz/shrink/implementation_judge.hpp"

#include "fuzz/oracle/judge.hpp"
#include "reference/layout.hpp"

namespace r3 {

CaseJudge judge_with(const Implementation& impl, JudgeMode mode) {
  return [&impl, mode](const Case& c) -> Result<Judgement> {
    R3_TRY(Step step, derive_step(c));
    if (mode == JudgeMode::symbolic_when_possible && impl.policy() != nullptr) {
      return judge_symbolic(c, step, *impl.policy(), impl.name());
    }
    R3_TRY(ConcreteOutcome outcome, impl.run_concrete(c, step));
    return judge_concrete(c, step, outcome, impl.name());
  };
}

}  // namespace r3
