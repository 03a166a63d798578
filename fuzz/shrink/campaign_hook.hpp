// The shrinker as the campaign's ShrinkHook (fuzz/campaign/campaign.hpp): `r3fuzz run`
// shrinks each unique failure before it reports and writes it.
#pragma once

#include "fuzz/campaign/campaign.hpp"
#include "fuzz/shrink/shrink.hpp"

namespace r3 {

// The campaign re-judges the returned case with its own rule (choose_judge_mode(mode, ...)
// per case) and keeps it only when the signature is the same. So the hook first shrinks with
// the mode pinned to the one the failure was found in (the better result), and when the
// campaign's rule would judge that result differently, shrinks again judging every candidate
// by the rule itself. Progress lines go to options.progress.
ShrinkHook campaign_shrink_hook(Mode mode, ShrinkOptions options);

}  // namespace r3

namespace r3 {

// The campaign's CanonicalHook (fuzz/campaign/grouping.hpp): shrinks with the path free to
// change, keeping only the implementation, verdict and severity, so failures of one root cause
// on several paths reduce to one case. Judged by the campaign's rule; the case unchanged when the
// result would not keep the verdict.
CanonicalHook campaign_canonical_hook(Mode mode, ShrinkOptions options);

}  // namespace r3
