// What the reference level needs from an engine: the interface every engine implements in its
// folder (reference/engines/NAME/model.cpp) and registers in one line
// (reference/engines/registry.cpp). The generic code (validation, layout, profiles, measures,
// the policy table, faults) calls these and never names an engine. The parts above reference/
// (drawing, shrinking, codecs, explain, export, adapters, seed, the GPU plan) are registered the
// same way at their own level: docs/ENGINES.md has the whole recipe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference/capture.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/fault.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3 {

class LifecycleModel;  // reference/trace/lifecycle.hpp

// One of an engine's profiles: the version of the engine it models.
struct ProfileInfo {
  std::string_view name;     // "vllm-legacy": the --profile value and the case file's "profile"
  std::string_view summary;  // "vLLM with MoE DP chunking", for --help
};

// One of an engine's policy models (reference/policy.hpp), by its implementation name.
struct PolicyInfo {
  std::string_view name;         // "vllm-50874"
  std::string_view description;  // one line for `r3fuzz --list-impls`
  std::unique_ptr<CapturePolicy> (*make)();
};

// describe_changes()' sink: one "name before -> after" item, added only when they differ.
using ChangeItem = std::function<void(const char* name, const std::string& before, const std::string& after)>;

class EngineModel {
 public:
  virtual ~EngineModel() = default;

  // "vllm": the case file's "engine" and every place an engine is named.
  virtual std::string_view name() const = 0;

  // Its profiles, in order: the first is the engine's default, and profile_of() tries them in
  // this order for the narrowest one a case lies in.
  virtual std::span<const ProfileInfo> profiles() const = 0;

  // The case: the rules a case of the engine obeys before any layout is derived (the format,
  // never a profile), and the step every rank's capture then sees.
  virtual Status validate(const Case& c) const = 0;
  // derive_step_into: into `s`, whatever it held (a campaign derives every case into one step).
  virtual Status derive_step_into(Step& s, const Case& c) const = 0;

  // Why the version of `profile` (one of this engine's) never runs `c`, naming the rule and its
  // source; ok when it runs it. fit_to_profile: the smallest edits that bring a valid case inside.
  virtual Status check_profile(const Case& c, Profile profile) const = 0;
  virtual Case fit_to_profile(Case c, Profile profile) const = 0;
  // Whether the version of `profile` chunks the DP batch (Case::dp_chunk), and whether it can
  // micro-batch this step (Case::microbatches). Any engine may do neither.
  virtual bool chunks_dp(Profile profile) const {
    (void)profile;
    return false;
  }
  virtual bool may_microbatch(const Case& c, Profile profile) const {
    (void)c;
    (void)profile;
    return false;
  }

  // How a case of the engine reads (reference/case_measure.hpp): a one-line summary, the count
  // of its own fields that differ from their defaults, and its own fields' changes.
  virtual std::string summarize(const Case& c) const = 0;
  virtual int own_non_default_fields(const Case& c) const {
    (void)c;
    return 0;
  }
  virtual void describe_own_changes(const Case& before, const Case& after, const ChangeItem& item) const {
    (void)before;
    (void)after;
    (void)item;
  }
  // The capture layout a finding's signature names beside the path (empty: the path says it).
  virtual std::string capture_layout_text(const Case& c) const {
    (void)c;
    return {};
  }

  // Sizes: the most rows any buffer of any of the engine's models holds for `c` (the
  // provenance encoding must fit a row index), and whether the concrete judge may
  // materialise every buffer (fuzz/oracle/judge_case.hpp).
  virtual int64_t most_buffer_rows(const Case& c) const = 0;
  virtual bool small_enough_to_materialise(const Case& c) const = 0;

  // The policy models, and which of them a command runs when the user names none: the
  // engine's released versions (run, replay), and its proposed fix (exhaust, explain).
  virtual std::span<const PolicyInfo> policies() const = 0;
  virtual std::vector<std::string_view> released_policies() const = 0;
  virtual std::string_view fixed_policy() const = 0;

  // Faults (reference/fault.hpp): whether the engine's capture can have `f`, the decision an
  // engine with it takes, and what its capture is handed under it. Called only for an applying
  // fault on a call of the engine that was not rejected.
  virtual bool has_fault(Fault f) const = 0;
  // The engine's own rows of the mutant table (own_fault ids, declared in its folder), which
  // all_faults() lists after the layout faults; has_fault covers them too.
  virtual std::span<const FaultEntry> own_faults() const { return {}; }
  virtual void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) const = 0;
  virtual CaptureCall call_under_fault(Fault f, CaptureCall call) const {
    (void)f;
    return call;
  }
  // The decision of a policy model `base` with `f` (fuzz/implementations/faulty_policy.hpp): a
  // policy has no all-gather, so the engine emulates its gather faults in the decision.
  virtual void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call,
                                 CaptureDecision& out) const = 0;

  // The engine's request lifecycle (reference/trace/lifecycle.hpp): how its rows become each
  // finished request's routes. Null for an engine whose lifecycle is not modelled.
  virtual const LifecycleModel* lifecycle() const { return nullptr; }
};

// The registered models, in registry order (reference/engines/registry.cpp, then add_engine()).
std::span<const EngineModel* const> engine_models();

}  // namespace r3
