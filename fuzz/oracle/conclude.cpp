#include <algorithm>

#include "fuzz/oracle/judge.hpp"

namespace r3 {
namespace {

std::string first_branch(const RankJudgement& rank) {
  for (std::string_view b : rank.branches)
    if (b == "error") return "error";
  return rank.branches.empty() ? "none" : std::string(rank.branches.back());
}

bool capacity_short(Judgement& j, const Case& c, const Step& step) {
  if (j.allocation.capture_rows < step.capture_rows_needed) {
    // An engine whose derivation adds to the step (SGLang) writes the whole tensor it is given,
    // which is larger than any one rank's batch under DP attention: a torch size error at capture
    // (at start-up when a CUDA graph captures it).
    j.detail = "capture buffer has " + std::to_string(j.allocation.capture_rows) + " rows, " +
               (step.engine_step ? "a capture call writes " + std::to_string(step.capture_rows_needed) + " rows"
                                 : "a rank runs " + std::to_string(step.capture_rows_needed) + " tokens");
    return true;
  }
  if (step.replay_rows_needed && j.allocation.replay_rows.value_or(0) < *step.replay_rows_needed) {
    j.detail = "replay buffer has " + std::to_string(j.allocation.replay_rows.value_or(0)) + " rows, the " +
               (c.path == Path::gathered ? "gathered batch" : "batch") + " the monolithic kernel processes has " +
               std::to_string(*step.replay_rows_needed);
    return true;
  }
  return false;
}

// Entry by entry: a case has one or two calls, and comparing through memcmp cost more.
bool same_gathers(const std::vector<char>& a, const std::vector<char>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k] != b[k]) return false;
  return true;
}

// A TP group whose ranks disagree on issuing the TP all-gather hangs in production. A class's
// members issue what its lead does, so the first class of a group that differs from the
// group's first class holds the first odd rank.
const RankJudgement* collective_mismatch(const Judgement& j) {
  const RankJudgement* group_lead = nullptr;
  for (const RankJudgement& c : j.classes) {
    if (c.tp == 0) {
      group_lead = &c;
      continue;
    }
    if (!same_gathers(c.tp_gathers, group_lead->tp_gathers)) return &c;
  }
  return nullptr;
}

}  // namespace

void conclude(Judgement& j, const Case& c, const Step& step) {
  auto settle = [&](Verdict v, Severity s, const RankJudgement* rank) {
    j.verdict = v;
    j.severity = s;
    if (rank) {
      j.branch = first_branch(*rank);
      if (j.detail.empty()) j.detail = rank->detail;
    }
  };
  const RankJudgement* lead = j.classes.empty() ? nullptr : &j.classes.front();
  if (capacity_short(j, c, step)) return settle(Verdict::capacity, Severity::failure, lead);
  if (step.rejection) {
    const bool someone_rejected = std::any_of(j.classes.begin(), j.classes.end(), [](auto& r) { return r.rejected; });
    if (someone_rejected) return settle(Verdict::pass, Severity::none, nullptr);
    for (RankJudgement& r : j.classes) {
      r.verdict = Verdict::missed_reject;
      r.detail = "accepted metadata the reference rejects: " + *step.rejection;
    }
    return settle(Verdict::missed_reject, Severity::failure, lead);
  }
  if (const RankJudgement* odd = collective_mismatch(j)) {
    j.detail = "dp " + std::to_string(odd->dp) + ": tp 0 and tp " + std::to_string(odd->tp) +
               " disagree on issuing the TP all-gather (a hang in production)";
    return settle(Verdict::collective_mismatch, Severity::failure, odd);
  }
  // A class's lead is its first rank, and a class with TP rank 0 leads with it.
  const RankJudgement* first_failing = nullptr;
  for (const RankJudgement& r : j.classes) {
    if (r.verdict == Verdict::pass) continue;
    if (!first_failing) first_failing = &r;
    // Only TP rank 0 publishes; overflows and raised errors hurt whichever rank hits them.
    if (r.tp == 0 || r.verdict != Verdict::wrong_rows) return settle(r.verdict, Severity::failure, &r);
  }
  if (first_failing) return settle(first_failing->verdict, Severity::latent, first_failing);
  settle(Verdict::pass, Severity::none, nullptr);
}

}  // namespace r3
