// What `r3fuzz exhaust` and `r3fuzz mutants` compare: an implementation against the reference
// (any failing verdict is a difference), or two implementations against each other (their
// outcomes differ: the case verdict, its severity, or any rank's verdict or rejection).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "fuzz/exhaust/search.hpp"
#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/oracle/verdict.hpp"
#include "reference/implementation.hpp"

namespace r3 {

// Judges one case. An Error means the implementation itself failed (an adapter crashed).
using StepJudge = std::function<Result<Judgement>(const Case& c, const Step& step)>;

// Judged in the mode `mode`'s rule picks (judge_by_rule, fuzz/oracle/judge_case.hpp): symbolic
// keeps policy models symbolic, concrete runs them through the host executor, since value
// faults such as narrow-int16 show only in concrete buffers. A case no mode can judge is an
// Error. The implementation must outlive the judge.
StepJudge judge_implementation(const Implementation& impl, Mode mode = Mode::symbolic);

// "wrong_rows failure (branch local): buffer row 0 of dp 1 holds ..." or "pass".
std::string summarize(const Judgement& j);

// nullopt when the two judgements tell the same outcome, else the first difference in words.
// Allocations and wording are not compared: only what the implementation did.
std::optional<std::string> outcome_difference(const Judgement& a, const Judgement& b);

// A difference whenever the judgement is not pass (latent ones included).
CaseCheck differs_from_reference(StepJudge judge);

// A difference whenever the two judgements' outcomes differ.
CaseCheck differs_between(StepJudge a, StepJudge b);

}  // namespace r3
