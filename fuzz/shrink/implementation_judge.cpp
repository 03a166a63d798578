#include "fuzz/shrink/implementation_judge.hpp"

#include "reference/layout.hpp"

namespace r3 {
namespace {

std::string too_large(const Implementation& impl) {
  return impl.name() + " cannot be judged on this case: it has no policy to judge symbolically and the case is too "
                       "large to run concretely (needs M <= " +
         std::to_string(kConcreteMaxTokens) + " and dp*tp <= " + std::to_string(kConcreteMaxRanks) + ")";
}

}  // namespace

Result<JudgeMode> judge_mode_for(const Implementation& impl, const Case& c, Mode mode) {
  if (std::optional<JudgeMode> how = choose_judge_mode(mode, impl, c)) return *how;
  return Error{too_large(impl) + " in mode " + std::string(to_string(mode))};
}

CaseJudge judge_with(const Implementation& impl, JudgeMode how) {
  return [&impl, how](const Case& c) -> Result<Judgement> {
    R3_TRY(Step step, derive_step(c));
    if (how == JudgeMode::symbolic && impl.policy() == nullptr) {
      return Error{impl.name() + " has no policy: it can only be judged concretely"};
    }
    if (how == JudgeMode::concrete && !fits_concrete(c)) return Error{too_large(impl)};
    return judge_case(impl, c, step, how);
  };
}

}  // namespace r3
