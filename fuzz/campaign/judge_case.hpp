// Judging one case of one implementation, in concrete or symbolic mode, and the rule that
// picks the mode in a campaign.
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
// (provenance_fits) and that are small (M <= 64, D*T <= 64) run concretely.
inline constexpr int64_t kConcreteMaxTokens = 64;
inline constexpr int kConcreteMaxRanks = 64;
bool fits_concrete(const Case& c);

// How `impl` is judged on `c` in a campaign of `mode`; nullopt when it cannot be (a
// concrete-only implementation on a case too large to run concretely, or symbolic mode on
// an implementation without a policy and a case too large).
std::optional<JudgeMode> choose_judge_mode(Mode mode, const Implementation& impl, const Case& c);

// The judgement; an implementation that fails to run (adapter crash) gives adapter_error.
Judgement judge_case(const Implementation& impl, const Case& c, const Step& step, JudgeMode mode,
                     RankDetails details = RankDetails::every_rank);

// The same into `out`, reusing its storage where the judge can (symbolic mode).
void judge_case_into(Judgement& out, const Implementation& impl, const Case& c, const Step& step, JudgeMode mode,
                     RankDetails details);

// The branch a judgement took: the failing rank's, else TP rank 0 of DP rank 0's ("error"
// when a call raised, else its last call's branch).
std::string branch_taken(const Judgement& j);

}  // namespace r3
