#include "fuzz/campaign/case_outcome.hpp"

#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3 {

void ImplOutcome::reset() {
  mode.reset();
  verdict = Verdict::pass;
  severity = Severity::none;
  interrupted = false;
  failed = false;
  known_failure.reset();
  branch.clear();
}

namespace {

// The failure into `o`: the number of a failure the merge has seen, else its words (reusing the
// storage of the last failure judged into it).
void keep_failure(const Judgement& j, const Case& c, SeenSignatures::View* seen, ImplOutcome& o) {
  o.failed = true;
  Signature signature = signature_of(j, c);
  if (seen && (o.known_failure = seen->find(signature))) return;
  if (!o.failing) o.failing = std::make_unique<FailedJudgement>();
  Judgement& kept = o.failing->judgement;
  kept.impl = j.impl;
  kept.verdict = j.verdict;
  kept.severity = j.severity;
  kept.branch = j.branch;
  kept.detail = j.detail;
  kept.allocation = j.allocation;
  o.failing->signature = std::move(signature);
}

}  // namespace

void judge_case_outcome(const CaseJudge& judge, uint64_t index, CaseOutcome& out) {
  const uint64_t seed = judge.seed;
  const GeneratorOptions& generator = *judge.generator;
  const std::vector<std::unique_ptr<Implementation>>& impls = *judge.impls;
  out.judged = true;
  out.index = index;
  out.error.reset();
  const GeneratedCase generated = generate_case(seed, index, generator);
  const Case& c = generated.c;
  out.keys = keys_of(generated);
  // The worker's step: derived into the storage of its last case's step.
  thread_local Step step;
  const Status derived = derive_step_into(step, c);
  out.impls.resize(impls.size());  // kept from the worker's last case, storage and all
  for (ImplOutcome& o : out.impls) o.reset();
  if (!derived.ok()) {
    out.impls.clear();
    out.error = Error{"internal: the generator produced an invalid case (seed " + std::to_string(seed) + ", case #" +
                      std::to_string(index) + "): " + derived.error().message};
    return;
  }
  if (Status inside = check_profile(c, generator.profile); !inside.ok()) {
    out.impls.clear();
    out.error = Error{"internal: the generator left its profile (seed " + std::to_string(seed) + ", case #" +
                      std::to_string(index) + "): " + inside.error().message};
    return;
  }
  for (size_t k = 0; k < impls.size(); ++k) {
    ImplOutcome& o = out.impls[k];
    o.mode = choose_judge_mode(judge.mode, *impls[k], c);
    if (!o.mode) continue;
    // Only the reported rank's words are read; rendering every rank's costs more than judging.
    Judgement& j = (*judge.judgements)[k];
    judge_case_into(j, *impls[k], c, step, *o.mode, RankDetails::reported_ranks);
    // A signal during the judgement may have cut it short (an adapter's wait ends with an
    // "interrupted" error): the judgement says nothing about the implementation.
    if (judge.stop && judge.stop->load(std::memory_order_relaxed)) {
      o.interrupted = true;
      out.impls.resize(k + 1);
      return;
    }
    o.verdict = j.verdict;
    o.severity = j.severity;
    o.branch = branch_taken(j);
    if (j.failed()) keep_failure(j, c, judge.seen, o);
  }
}

}  // namespace r3
