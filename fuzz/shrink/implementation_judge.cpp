#include "fuzz/shrink/implementation_judge.hpp"

#include "reference/layout.hpp"

namespace r3 {

CaseJudge judge_with(const Implementation& impl, JudgeMode how) {
  return [&impl, how](const Case& c) -> Result<Judgement> {
    R3_TRY(Step step, derive_step(c));
    if (how == JudgeMode::symbolic && impl.policy() == nullptr) {
      return Error{impl.name() + " has no policy: it can only be judged concretely"};
    }
    if (how == JudgeMode::concrete) R3_TRY_STATUS(judge_mode_for(impl, c, Mode::concrete));
    return judge_case(impl, c, step, how);
  };
}

CaseJudge judge_by_rule(const Implementation& impl, Mode mode) {
  return [&impl, mode](const Case& c) -> Result<Judgement> {
    R3_TRY(Step step, derive_step(c));
    return judge_by_rule(impl, c, step, mode);
  };
}

}  // namespace r3
