// The SGLang engine's model: its forward, layout, profiles, policies and faults, as the generic
// code reaches them (reference/engine_model.hpp).
#include "reference/engines/sglang/model.hpp"

#include <algorithm>

#include "reference/engines/sglang/faults.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/layout.hpp"
#include "reference/engines/sglang/lifecycle.hpp"
#include "reference/engines/sglang/measure.hpp"
#include "reference/engines/sglang/policy.hpp"
#include "reference/engines/sglang/profile.hpp"
#include "reference/engines/sglang/validate.hpp"

namespace r3::sglang {
namespace {

constexpr ProfileInfo kProfiles[] = {
    {"sglang", "SGLang upstream main"},
    {"sglang-miles", "SGLang's RL branch"},
};

std::unique_ptr<CapturePolicy> make_upstream() { return make_policy(Version::upstream); }
std::unique_ptr<CapturePolicy> make_miles() { return make_policy(Version::miles); }
std::unique_ptr<CapturePolicy> make_fixed() { return make_policy(Version::fixed); }

constexpr PolicyInfo kPolicies[] = {
    {"sglang", "SGLang's routed-experts capture, upstream main (model)", make_upstream},
    {"sglang-miles", "SGLang's capture on the sglang-miles RL branch (model)", make_miles},
    {"sglang-fixed", "the SGLang capture this project proposes", make_fixed},
};

class SglangModel final : public EngineModel {
 public:
  std::string_view name() const override { return "sglang"; }
  std::span<const ProfileInfo> profiles() const override { return kProfiles; }

  Status validate(const Case& c) const override { return sglang::validate(c); }
  Status derive_step_into(Step& s, const Case& c) const override {
    R3_TRY(Step derived, sglang::derive_step(c));
    s = std::move(derived);
    return ok_status();
  }

  Status check_profile(const Case& c, Profile profile) const override { return sglang::check_profile(c, profile); }
  Case fit_to_profile(Case c, Profile profile) const override { return sglang::fit_to_profile(std::move(c), profile); }

  std::string summarize(const Case& c) const override { return sglang::summarize(c); }
  int own_non_default_fields(const Case& c) const override {
    const Forward* f = forward_of(c);
    return f ? sglang::own_non_default_fields(*f) : 0;
  }
  void describe_own_changes(const Case& before, const Case& after, const ChangeItem& item) const override {
    if (forward_of(before) && forward_of(after)) sglang::describe_own_changes(*forward_of(before), *forward_of(after), item);
  }
  std::string capture_layout_text(const Case& c) const override { return std::string(to_string(capture_layout_of(c))); }

  // A token's index is below its rank's padded batch, itself below the buffer the case sizes.
  int64_t most_buffer_rows(const Case& c) const override {
    return std::max(buffer_rows(c, Version::upstream), buffer_rows(c, Version::fixed));
  }
  bool small_enough_to_materialise(const Case& c) const override { return most_buffer_rows(c) <= kMaterialisedMaxRows; }

  std::span<const PolicyInfo> policies() const override { return kPolicies; }
  std::vector<std::string_view> released_policies() const override { return {"sglang", "sglang-miles"}; }
  std::string_view fixed_policy() const override { return "sglang-fixed"; }

  bool has_fault(Fault f) const override { return sglang::has_fault(f); }
  std::span<const FaultEntry> own_faults() const override { return sglang::own_faults(); }
  void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) const override {
    sglang::apply_decision_fault(f, call, out);
  }
  CaptureCall call_under_fault(Fault f, CaptureCall call) const override { return sglang::call_under_fault(f, std::move(call)); }
  void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out) const override {
    sglang::decide_with_fault(base, f, call, out);
  }

  const LifecycleModel* lifecycle() const override { return &sglang::lifecycle_model(); }
};

}  // namespace

const EngineModel& model() {
  static const SglangModel instance;
  return instance;
}

Engine engine() {
  static const Engine handle = Engine::of(model());
  return handle;
}

}  // namespace r3::sglang
