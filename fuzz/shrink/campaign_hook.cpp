#include "fuzz/shrink/campaign_hook.hpp"

#include "fuzz/shrink/implementation_judge.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

bool reproduces(const CaseJudge& judge, const Case& c, const Signature& signature) {
  Result<Judgement> j = judge(c);
  return j.ok() && j->failed() && signature_of(*j, c) == signature;
}

}  // namespace

ShrinkHook campaign_shrink_hook(Mode mode, ShrinkOptions options) {
  return [mode, options](const Case& failing, const Implementation& impl, const Signature& signature) -> Case {
    const Result<JudgeMode> how = judge_mode_for(impl, failing, mode);
    if (!how.ok()) return failing;
    const CaseJudge rule = judge_by_rule(impl, mode);
    Result<ShrinkResult> pinned = shrink_case(failing, judge_with(impl, *how), options);
    if (pinned.ok() && pinned->signature == signature && reproduces(rule, pinned->minimal, signature)) {
      return pinned->minimal;
    }
    Result<ShrinkResult> ruled = shrink_case(failing, rule, options);
    if (ruled.ok() && ruled->signature == signature) return ruled->minimal;
    return failing;
  };
}

}  // namespace r3

namespace r3 {

CanonicalHook campaign_canonical_hook(Mode mode, ShrinkOptions options) {
  options.allow_path_change = true;
  options.keep_severity = true;
  return [mode, options](const Case& failing, const Implementation& impl, const Signature&) -> Case {
    Result<ShrinkResult> shrunk = shrink_case(failing, judge_by_rule(impl, mode), options);
    if (!shrunk.ok() || shrunk->stop == ShrinkStop::not_failing) return failing;
    return shrunk->minimal;
  };
}

}  // namespace r3
