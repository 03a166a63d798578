// One finding per bug. A failure is one signature (implementation, verdict, path, branch); a
// finding is one root cause, covering every implementation and signature that show it.
//
// The rule: two failures are one finding when they reduce to the same minimal case under the
// same verdict and severity, with the path free to change while reducing (the canonical hook:
// the shrinker with allow_path_change). An implementation whose failure reduces elsewhere still
// joins a finding when it fails identically (same verdict, severity and first difference) on
// that finding's reproducer: the GPU pipeline taking vllm-50874's decisions shares its findings.
// Distinct bugs of one implementation stay distinct: they reduce to different cases, or differ
// in verdict or severity.
//
// A model that knows its patches toward the proposed fix (SGLang's, reference/engines/sglang/
// policy.hpp) names the root cause itself: failures that the same patch repairs
// (fuzz/oracle/root_cause.hpp) are one finding whatever their verdict, layout or reproducer;
// a latent one gives way to a failure when one joins.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/oracle/verdict.hpp"
#include "reference/case.hpp"
#include "reference/implementation.hpp"

namespace r3 {

// Reduces a failing case to its canonical reproducer for (impl, verdict, severity); returns
// the case unchanged when it cannot. Empty: each failure's case is its own reproducer.
using CanonicalHook = std::function<Case(const Case& failing, const Implementation& impl, const Signature& signature)>;

struct Finding {
  Verdict verdict = Verdict::pass;
  Severity severity = Severity::failure;
  Profile profile = kDefaultProfile;  // the profile the reproducer was found under
  std::vector<std::string> implementations;  // in order of discovery
  std::vector<size_t> failures;      // indices of the failures it covers (the caller's list)
  Case reproducer;                   // the smallest case: canonical, no note or expect
  std::string detail;                // the first difference on the reproducer
  std::string file;                  // where the reproducer was written ("" = nowhere)
  std::string cause;                 // the patch that repairs it, when the model knows ("" = unknown)
  bool known = false;                // seeded from a known regression entry
};

class FindingGrouper {
 public:
  FindingGrouper(Mode mode, Profile profile, CanonicalHook canonical);

  struct Placement {
    size_t finding = 0;  // index into findings()
    bool created = false;
    bool reproducer_changed = false;  // a failure replaced a latent reproducer: write it again
  };

  // Places failure number `failure` of `impl` (its judgement `j` on `failing`, the signature's
  // already-shrunk case) in the finding it belongs to, creating one when none matches.
  Placement place(size_t failure, const Implementation& impl, const Judgement& j, const Case& failing);

  std::vector<Finding>& findings() { return findings_; }
  const std::vector<Finding>& findings() const { return findings_; }

 private:
  std::string key_of(const Judgement& j, const Case& canonical) const;
  bool fails_identically(const Implementation& impl, const Judgement& j, const Finding& f) const;
  void join(Finding& f, size_t failure, const std::string& impl);

  Mode mode_;
  Profile profile_;
  CanonicalHook canonical_;
  std::vector<Finding> findings_;
  std::map<std::string, size_t> by_key_;  // verdict, severity and canonical case -> finding
};

}  // namespace r3
