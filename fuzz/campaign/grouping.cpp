#include "fuzz/campaign/grouping.hpp"

#include <algorithm>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/oracle/root_cause.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

// The case as a key: its canonical JSON without the words that describe where it came from.
std::string case_text(Case c) {
  c.note.clear();
  c.expect.reset();
  c.profile.reset();
  return case_to_json_text(c);
}

}  // namespace

FindingGrouper::FindingGrouper(Mode mode, Profile profile, CanonicalHook canonical)
    : mode_(mode), profile_(profile), canonical_(std::move(canonical)) {}

std::string FindingGrouper::key_of(const Judgement& j, const Case& canonical) const {
  return std::string(to_string(j.verdict)) + "/" + std::string(to_string(j.severity)) + "\n" + case_text(canonical);
}

bool FindingGrouper::fails_identically(const Implementation& impl, const Judgement& j, const Finding& f) const {
  if (f.verdict != j.verdict || f.severity != j.severity) return false;
  const std::optional<JudgeMode> how = choose_judge_mode(mode_, impl, f.reproducer);
  if (!how) return false;
  const Result<Step> step = derive_step(f.reproducer);
  if (!step.ok()) return false;
  const Judgement there = judge_case(impl, f.reproducer, *step, *how);
  return there.verdict == f.verdict && there.severity == f.severity && there.detail == f.detail;
}

void FindingGrouper::join(Finding& f, size_t failure, const std::string& impl) {
  f.failures.push_back(failure);
  if (std::find(f.implementations.begin(), f.implementations.end(), impl) == f.implementations.end()) {
    f.implementations.push_back(impl);
  }
}

FindingGrouper::Placement FindingGrouper::place(size_t failure, const Implementation& impl, const Judgement& j,
                                                const Case& failing) {
  Case canonical = canonical_ ? canonical_(failing, impl, signature_of(j, failing)) : failing;
  canonical.note.clear();
  canonical.expect.reset();
  // The canonical case keeps the failure's verdict and severity; its first difference is the
  // one the finding reports.
  Judgement on_canonical = j;
  if (const std::optional<JudgeMode> how = choose_judge_mode(mode_, impl, canonical)) {
    if (Result<Step> step = derive_step(canonical); step.ok()) {
      Judgement again = judge_case(impl, canonical, *step, *how);
      if (again.verdict == j.verdict && again.severity == j.severity) on_canonical = std::move(again);
      else canonical = failing;  // the hook lost the bug: fall back to the failure's own case
    }
  }
  std::string cause;
  if (const CapturePolicy* policy = impl.followed_policy()) {
    if (Result<Step> step = derive_step(canonical); step.ok()) cause = root_cause(*policy, canonical, *step);
  }
  // A failure two patches must repair is those bugs seen together: it belongs to the finding of
  // the first (in the model's patch order), which a failure that patch repairs alone then takes over.
  const std::string first_patch = cause.substr(0, cause.find('+'));
  const std::string key = cause.empty() ? key_of(on_canonical, canonical) : "cause " + first_patch;
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    Finding& f = findings_[it->second];
    join(f, failure, impl.name());
    const bool shows_it_alone = cause == first_patch && f.cause != first_patch;
    const bool now_published = f.severity == Severity::latent && on_canonical.severity == Severity::failure;
    if (shows_it_alone || now_published) {
      f.verdict = on_canonical.verdict;
      f.severity = on_canonical.severity;
      f.reproducer = canonical;
      f.detail = on_canonical.detail;
      f.cause = cause;
      return {it->second, false, true};
    }
    return {it->second, false};
  }
  for (size_t i = 0; i < findings_.size(); ++i) {
    Finding& f = findings_[i];
    const bool new_to_it =
        std::find(f.implementations.begin(), f.implementations.end(), impl.name()) == f.implementations.end();
    if (new_to_it && fails_identically(impl, on_canonical, f)) {
      join(f, failure, impl.name());
      by_key_.emplace(key, i);
      return {i, false};
    }
  }
  Finding f;
  f.verdict = on_canonical.verdict;
  f.severity = on_canonical.severity;
  f.profile = profile_;
  f.reproducer = canonical;
  f.detail = on_canonical.detail;
  f.cause = cause;
  join(f, failure, impl.name());
  by_key_.emplace(key, findings_.size());
  findings_.push_back(std::move(f));
  return {findings_.size() - 1, true};
}

}  // namespace r3
