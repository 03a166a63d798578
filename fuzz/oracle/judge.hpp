// The differential oracle: an implementation's outcome beside the reference capturer's.
#pragma once

#include <string_view>

#include "fuzz/oracle/verdict.hpp"
#include "reference/case.hpp"
#include "reference/implementation.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3 {

// Which failing ranks get their first difference in words: every one (explain, exhaust), or
// only those a case report can show (campaigns: words cost more than judging).
enum class RankDetails { every_rank, reported_ranks };

// How the symbolic judge covers the ranks: by classes of identical ranks (the TP ranks of a
// DP rank that read the same rows and decide alike are simulated once), or every rank on its
// own: the slow judgement the class-based one must equal, kept for the property that says so.
enum class RankClasses { identical_ranks_once, every_rank_alone };

// Judges a policy from shapes alone: its decisions are applied to row ranges, not data.
Judgement judge_symbolic(const Case& c, const Step& step, const CapturePolicy& policy, std::string_view impl_name,
                         RankDetails details = RankDetails::every_rank,
                         RankClasses classes = RankClasses::identical_ranks_once);

// The same into `out`, reusing its storage: a campaign judges millions of cases, and a fresh
// Judgement per case costs more in allocation than the judging does.
void judge_symbolic_into(Judgement& out, const Case& c, const Step& step, const CapturePolicy& policy,
                         std::string_view impl_name, RankDetails details,
                         RankClasses classes = RankClasses::identical_ranks_once);

// Judges an implementation's concrete run: every buffer it returned is compared whole,
// guard rows included, against the reference image (capture rows [0, n_d) of the layer hold
// tokens (d, 0..n_d-1), every other row and layer untouched; replay rows hold the routing of
// every row the kernel processed). A malformed outcome (wrong rank count or buffer shape) is
// an adapter_error naming what is wrong.
Judgement judge_concrete(const Case& c, const Step& step, const ConcreteOutcome& outcome, std::string_view impl_name);

// The case-level verdict from rank verdicts (shared by the symbolic and concrete judges), in
// design.md's order: capacity, then a missed rejection, then a collective mismatch, then the
// first failing rank with TP rank 0 (failure), then any failing rank (latent), else pass.
void conclude(Judgement& j, const Case& c, const Step& step);

}  // namespace r3
