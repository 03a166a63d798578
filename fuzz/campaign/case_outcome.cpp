#include "fuzz/campaign/case_outcome.hpp"

#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3 {

void judge_case_outcome(uint64_t seed, uint64_t index, const GeneratorOptions& generator, Mode mode,
                        const std::vector<std::unique_ptr<Implementation>>& impls, std::vector<Judgement>& judgements,
                        const std::atomic<bool>* stop, CaseOutcome& out) {
  out.judged = true;
  out.index = index;
  out.impls.clear();
  out.error.reset();
  out.generated = generate_case(seed, index, generator);
  const Case& c = out.generated.c;
  Result<Step> step = derive_step(c);
  if (!step.ok()) {
    out.error = Error{"internal: the generator produced an invalid case (seed " + std::to_string(seed) + ", case #" +
                      std::to_string(index) + "): " + step.error().message};
    return;
  }
  if (Status inside = check_profile(c, generator.profile); !inside.ok()) {
    out.error = Error{"internal: the generator left its profile (seed " + std::to_string(seed) + ", case #" +
                      std::to_string(index) + "): " + inside.error().message};
    return;
  }
  for (size_t k = 0; k < impls.size(); ++k) {
    ImplOutcome& o = out.impls.emplace_back();
    o.mode = choose_judge_mode(mode, *impls[k], c);
    if (!o.mode) continue;
    // Only the reported rank's words are read; rendering every rank's costs more than judging.
    Judgement& j = judgements[k];
    judge_case_into(j, *impls[k], c, *step, *o.mode, RankDetails::reported_ranks);
    // A signal during the judgement may have cut it short (an adapter's wait ends with an
    // "interrupted" error): the judgement says nothing about the implementation.
    if (stop && stop->load(std::memory_order_relaxed)) {
      o.interrupted = true;
      return;
    }
    o.verdict = j.verdict;
    o.severity = j.severity;
    o.branch = branch_taken(j);
    if (j.failed()) {
      Judgement& kept = o.failing.emplace();
      kept.impl = j.impl;
      kept.verdict = j.verdict;
      kept.severity = j.severity;
      kept.branch = j.branch;
      kept.detail = j.detail;
      kept.allocation = j.allocation;
    }
  }
}

}  // namespace r3
