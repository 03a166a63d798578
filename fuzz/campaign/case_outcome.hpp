// One generated case judged by every implementation: what a campaign worker hands back to the
// thread that merges results in case order. Judging is pure (case i depends on (seed, i) alone),
// so workers judge in any order and the merge sees exactly what one thread would have seen.
// An outcome holds no case: the merge needs only its shape and, for a failing implementation,
// the signature; the rare new failure regenerates its case from (seed, i). Outcomes are kept by
// the thousand while the merge catches up, and one that held its case would hold its heap too.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/campaign/distribution_tally.hpp"
#include "fuzz/campaign/seen_signatures.hpp"
#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/generate/generator.hpp"
#include "fuzz/oracle/verdict.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"

namespace r3 {

// A failing judgement's words and signature: what the merge needs of a failure.
struct FailedJudgement {
  // The judgement without its per-rank verdicts: copying those for every failing case cost more
  // than judging, and a failure needs only its signature and words.
  Judgement judgement;
  Signature signature;  // taken while the case was at hand
};

// Small, and reused in place from case to case by the worker that judges into it: the merge reads
// every outcome's verdict but only a new failure's words, so those live out of line, and their
// storage (strings included) stays allocated for the next one.
struct ImplOutcome {
  std::optional<JudgeMode> mode;     // nullopt: this implementation cannot judge the case (skipped)
  Verdict verdict = Verdict::pass;
  Severity severity = Severity::none;
  bool interrupted = false;          // a signal cut the judgement short: it says nothing
  bool failed = false;               // the judgement failed: known_failure or *failing says how
  // A signature the merge had seen (seen_signatures.hpp): the number of its failure in the report.
  std::optional<size_t> known_failure;
  std::string branch;                // branch_taken()
  std::unique_ptr<FailedJudgement> failing;  // read only when `failed` without a known_failure

  void reset();  // as constructed, keeping the storage
};

struct CaseOutcome {
  bool judged = false;               // false: never reached (time ran out, or a stop)
  uint64_t index = 0;
  CaseKeys keys;                     // the generated case's shape
  std::vector<ImplOutcome> impls;    // in implementation order; stops after an interrupted one
  std::optional<Error> error;        // an invalid case: a bug in r3fuzz's generator
};

// What judging a case needs besides the case: its implementations and one worker's scratch.
struct CaseJudge {
  uint64_t seed = 1;
  const GeneratorOptions* generator = nullptr;
  Mode mode = Mode::mixed;
  const std::vector<std::unique_ptr<Implementation>>* impls = nullptr;
  std::vector<Judgement>* judgements = nullptr;  // scratch, one per implementation
  const std::atomic<bool>* stop = nullptr;       // read after each judgement (may be null)
  SeenSignatures::View* seen = nullptr;          // null: every failure keeps its words
};

// Case `index` generated and judged by every implementation into `out`.
void judge_case_outcome(const CaseJudge& judge, uint64_t index, CaseOutcome& out);

}  // namespace r3
