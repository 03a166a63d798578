// Judging one case of one implementation, in concrete or symbolic mode, and the one rule that
// picks the mode from a command's --mode (campaigns, shrink, exhaust, mutants, replay and the
// fuzz targets all judge through it).
#pragma once

#include <optional>
#include <string_view>

#include "fuzz/oracle/judge.hpp"
#include "fuzz/oracle/verdict.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"
#include "reference/layout.hpp"

namespace r3 {

enum class Mode { concrete, symbolic, mixed };
enum class JudgeMode { concrete, symbolic };

std::string_view to_string(Mode mode);
std::string_view to_string(JudgeMode mode);
Result<Mode> parse_mode(std::string_view text);

// Concrete runs materialise every buffer: only cases whose values encode their provenance
// (provenance_fits), with few ranks (D*T <= 64) and buffers their engine calls small
// (EngineModel::small_enough_to_materialise) run concretely.
inline constexpr int kConcreteMaxRanks = 64;
bool fits_concrete(const Case& c);

// How `impl` is judged on `c` under `mode`; nullopt when it cannot be (a concrete-only
// implementation on a case too large to run concretely, or symbolic mode on an implementation
// without a policy and a case too large):
//   concrete  concretely, when the case fits;
//   symbolic  symbolically when the implementation has a policy, else concretely when it fits;
//   mixed     concretely when the case fits, else symbolically when it has a policy.
std::optional<JudgeMode> choose_judge_mode(Mode mode, const Implementation& impl, const Case& c);

// The same, with an Error that says why no mode can judge the case.
Result<JudgeMode> judge_mode_for(const Implementation& impl, const Case& c, Mode mode = Mode::mixed);

// The judgement; an implementation that fails to run (adapter crash) gives adapter_error.
Judgement judge_case(const Implementation& impl, const Case& c, const Step& step, JudgeMode mode,
                     RankDetails details = RankDetails::every_rank);

// The judgement in the mode `mode`'s rule picks for this case (an Error when none can).
Result<Judgement> judge_by_rule(const Implementation& impl, const Case& c, const Step& step, Mode mode);

// The same into `out`, reusing its storage where the judge can (symbolic mode).
void judge_case_into(Judgement& out, const Implementation& impl, const Case& c, const Step& step, JudgeMode mode,
                     RankDetails details);

// The branch a judgement took: the failing rank's, else TP rank 0 of DP rank 0's ("error"
// when a call raised, else its last call's branch).
std::string branch_taken(const Judgement& j);

}  // namespace r3
