// The domain-aware shrinker: from a failing case to the smallest readable case that fails
// the same way. Greedy passes (those of the case's engine, passes.hpp), in the order that helps
// a reader most (DP ranks, TP size, token counts and M, layers, top-k and experts, padding,
// micro-batches and DP chunks, monolithic, path, metadata), each trying its candidates
// most-reducing first (the target value, then halving the distance, then -1), repeated until a
// whole round changes nothing.
// Every candidate passes validate() before it is judged; invalid ones are skipped.
//
// Deterministic for a deterministic judge; idempotent when it stops at the fixpoint:
// shrink(shrink(c)) == shrink(c), because the second run tries the same candidates in the
// same order on a case where none of them reproduces.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "fuzz/oracle/verdict.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/profile.hpp"

namespace r3 {

// Judges one case against the implementation being shrunk for. An Error means the
// implementation itself failed (an adapter crashed); the shrinker counts such candidates
// as not reproducing.
using CaseJudge = std::function<Result<Judgement>(const Case&)>;

struct ShrinkOptions {
  double max_seconds = 60;          // wall-clock bound; stopping on it gives up idempotence
  int64_t max_judgements = 100000;  // bound on candidates judged
  bool keep_severity = true;        // a failure must not shrink into a latent difference
  // The signature names the path, so by default the path never changes. With this set the
  // shrinker may move the path toward single and treats (impl, verdict) as the bug (and the
  // severity, with keep_severity): the branch follows the path.
  bool allow_path_change = false;
  // Every candidate must lie inside this profile, as the input must: a shrunk case stays a step
  // the engine can run (reference/profile.hpp). The library default constrains nothing; the
  // campaign and the commands pass the active profile (vllm unless --profile says otherwise).
  Profile profile = Profile::any();
  // Set by a signal (r3fuzz run's Ctrl-C): stop before the next candidate, keeping the smallest so far.
  const std::atomic<bool>* stop = nullptr;
  // Called with one line per accepted reduction ("dp 32 -> 16"), and once at the end.
  std::function<void(const std::string&)> progress;
};

enum class ShrinkStop {
  fixpoint,        // no candidate of a whole round reproduces: the result is minimal for the passes
  time_limit,      // max_seconds ran out
  judgement_limit, // max_judgements ran out
  not_failing,     // the input passes: nothing to shrink
  interrupted,     // options.stop was set
};
std::string_view to_string(ShrinkStop stop);

struct ShrinkStats {
  int64_t judged = 0;          // candidates the judge ran on (cache hits excluded)
  int64_t accepted = 0;        // reductions kept
  int64_t invalid_skipped = 0; // candidates validate() refused
  int64_t outside_profile_skipped = 0;  // valid candidates outside ShrinkOptions::profile
  int64_t judge_errors = 0;    // candidates the implementation failed on
  int rounds = 0;
  double seconds = 0;
};

struct ShrinkResult {
  Case minimal;            // the input itself when it does not fail
  Judgement judgement;     // the minimal case's judgement
  Signature signature;     // the bug kept throughout
  ShrinkStop stop = ShrinkStop::fixpoint;
  ShrinkStats stats;
};

// Errors: the input is invalid or outside options.profile, or the judge fails on the input itself.
Result<ShrinkResult> shrink_case(const Case& failing, const CaseJudge& judge, const ShrinkOptions& options = {});

}  // namespace r3
