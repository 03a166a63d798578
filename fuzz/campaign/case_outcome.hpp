// One generated case judged by every implementation: what a campaign worker hands back to the
// thread that merges results in case order. Judging is pure (case i depends on (seed, i) alone),
// so workers judge in any order and the merge sees exactly what one thread would have seen.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/generate/generator.hpp"
#include "fuzz/oracle/verdict.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"

namespace r3 {

struct ImplOutcome {
  std::optional<JudgeMode> mode;     // nullopt: this implementation cannot judge the case (skipped)
  Verdict verdict = Verdict::pass;
  Severity severity = Severity::none;
  std::string branch;                // branch_taken()
  bool interrupted = false;          // a signal cut the judgement short: it says nothing
  // The judgement, kept only when it failed, without its per-rank verdicts: copying those for every
  // failing case cost more than judging, and a failure needs only its signature and words.
  std::optional<Judgement> failing;
};

struct CaseOutcome {
  bool judged = false;               // false: never reached (time ran out, or a stop)
  uint64_t index = 0;
  GeneratedCase generated;
  std::vector<ImplOutcome> impls;    // in implementation order; stops after an interrupted one
  std::optional<Error> error;        // an invalid case: a bug in r3fuzz's generator
};

// Case `index` generated and judged by every implementation, `judgements` reused as scratch
// (one per implementation). `stop` (may be null) is read after each judgement.
void judge_case_outcome(uint64_t seed, uint64_t index, const GeneratorOptions& generator, Mode mode,
                        const std::vector<std::unique_ptr<Implementation>>& impls, std::vector<Judgement>& judgements,
                        const std::atomic<bool>* stop, CaseOutcome& out);

}  // namespace r3
