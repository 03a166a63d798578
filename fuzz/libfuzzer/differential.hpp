// The body of the differential fuzz target, as plain library code: which implementations run
// (chosen by environment variables, since libFuzzer owns argv), judging one case, and the
// report a failing case prints. differential_target.cpp wraps it in LLVMFuzzerTestOneInput.
//
//   R3FUZZ_IMPLS   comma-separated implementation names (default: vllm-50874, plus gpu on the
//                  host backend when the registry has it; sglang and gpu:sglang for SGLang's
//                  profiles; all four under any)
//   R3FUZZ_FAULT   a design.md fault name: the implementations become the faulted one alone
//                  (gpu with the fault, else r3-fixed+FAULT), unless R3FUZZ_IMPLS is also set
//   R3FUZZ_STRICT  1: latent verdicts abort too (vllm-50874's corner case 2 (docs/layout-contract.md section 8) is latent)
//   R3FUZZ_KNOWN   a directory of regression cases ("expect" set): failures whose signature one
//                  of them shows, or that belong to the same finding as one of them (the rule of
//                  fuzz/campaign/grouping.hpp), are known bugs, printed once and not aborted on
//   R3FUZZ_PROFILE vllm (default), vllm-legacy, sglang, sglang-miles or any: inputs outside the profile are not judged,
//                  and the structure-aware mutator keeps its cases inside it (reference/profile.hpp)
//   R3FUZZ_METADATA_OVERRIDES  1: also judge inputs whose DP metadata disagrees with their layout
//                  (needs R3FUZZ_PROFILE=any: no vLLM profile has overrides)
//                  (corner case 8 (docs/layout-contract.md section 8)). Off by default, as in `r3fuzz run`: some disagreements
//                  cannot be seen from shapes by any capture code, so even r3-fixed misses them.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fuzz/campaign/grouping.hpp"
#include "fuzz/oracle/verdict.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3 {

struct DifferentialConfig {
  std::vector<std::string> impls;  // empty: the defaults above
  std::string fault;               // "" = none
  bool strict = false;
  std::string known_dir;           // "" = none
  bool metadata_overrides = false;
  Profile profile = kDefaultProfile;
};

using GetEnv = std::function<const char*(const char*)>;

// R3FUZZ_PROFILE (the default profile when unset); an unknown name is an error naming it.
Result<Profile> profile_from_env(const GetEnv& getenv);

// Reads the variables above; an unknown R3FUZZ_STRICT value is an error naming it.
Result<DifferentialConfig> differential_config_from_env(const GetEnv& getenv);

struct DifferentialVerdict {
  bool skipped = false;        // not judged: outside R3FUZZ_PROFILE, or a metadata override while
                               // R3FUZZ_METADATA_OVERRIDES is off
  bool abort = false;          // a failing (or, strict, latent) verdict with an unknown signature
  std::string report;          // the readable report and the JSON case; empty when every judgement passed
  std::vector<Signature> known_hits;  // failures skipped as known
};

class DifferentialRunner {
 public:
  // Builds the implementations and, with known_dir, judges every regression case there to
  // learn the known signatures and findings. Errors name the implementation, fault or file.
  static Result<DifferentialRunner> create(const DifferentialConfig& config);

  // Judges every implementation on `c` (a valid case small enough for concrete mode):
  // symbolically when it has a policy, else concretely. Const to its callers; it learns which
  // new signatures belong to known findings (a cache) and reuses its judgements' storage.
  DifferentialVerdict run(const Case& c) const;

  const std::vector<std::unique_ptr<Implementation>>& implementations() const { return impls_; }
  const std::set<Signature>& known() const { return known_; }

 private:
  // Whether a failure with an unknown signature belongs to a known finding; a signature found
  // so is remembered as known, so each is canonicalised once.
  bool joins_known_finding(const Implementation& impl, const Judgement& j, const Case& c) const;

  DifferentialConfig config_;
  std::vector<std::unique_ptr<Implementation>> impls_;
  mutable std::set<Signature> known_;
  mutable std::set<Signature> not_known_;  // unknown signatures found to start findings of their own
  // Findings of the known regression cases; run() adds no finding of its own to it.
  mutable std::unique_ptr<FindingGrouper> known_findings_;
  mutable size_t placed_ = 0;
  // One judgement per implementation, reused from input to input: a fresh one per input costs
  // more in allocation (under ASan) than judging a small case does.
  mutable std::vector<Judgement> judgements_;
  // Each input's step, derived into the storage of the last one's (derive_step_into).
  mutable Step step_;
};

}  // namespace r3
