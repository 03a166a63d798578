// The vllm-ascend engine's model, as the generic code reaches it (reference/engine_model.hpp).
#include "reference/engines/ascend/model.hpp"

#include <algorithm>

#include "reference/engines/ascend/faults.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/ascend/layout.hpp"
#include "reference/engines/ascend/measure.hpp"
#include "reference/engines/ascend/policy.hpp"
#include "reference/engines/ascend/profile.hpp"
#include "reference/engines/ascend/validate.hpp"

namespace r3::ascend {
namespace {

constexpr ProfileInfo kProfiles[] = {
    {"ascend", "vllm-ascend main 182b75ea (MRv2 eager SP counts raw)"},
    {"ascend-mrv2-rounded", "vllm-ascend main, reading upstream MRv2 as rounding SP counts to TP"},
    {"ascend-0.26", "vllm-ascend releases/v0.26.0rc (V1 only, no upstream SP)"},
};

std::unique_ptr<CapturePolicy> make_main() { return make_policy(Version::main); }
std::unique_ptr<CapturePolicy> make_026() { return make_policy(Version::v026); }
std::unique_ptr<CapturePolicy> make_fixed() { return make_policy(Version::fixed); }

constexpr PolicyInfo kPolicies[] = {
    {kPolicyMain, "vllm-ascend's patched capture, main 182b75ea (model)", make_main},
    {kPolicy026, "vllm-ascend v0.26.0rc: the manual hook never reaches capture (model)", make_026},
    {kPolicyFixed, "the vllm-ascend capture this project proposes", make_fixed},
};

Variant variant_of(Profile profile) {
  switch (profile.variant()) {
    case 1: return Variant::aligned;
    case 2: return Variant::v026;
    default: return Variant::main;
  }
}

class AscendModel final : public EngineModel {
 public:
  std::string_view name() const override { return "ascend"; }
  std::span<const ProfileInfo> profiles() const override { return kProfiles; }

  Status validate(const Case& c) const override { return ascend::validate(c); }
  Status derive_step_into(Step& s, const Case& c) const override {
    R3_TRY(Step derived, ascend::derive_step(c));
    s = std::move(derived);
    return ok_status();
  }

  Status check_profile(const Case& c, Profile profile) const override {
    if (profile.is_any()) return ok_status();
    return ascend::check_profile(c, variant_of(profile));
  }
  Case fit_to_profile(Case c, Profile profile) const override {
    if (profile.is_any()) return c;
    return ascend::fit_to_profile(std::move(c), variant_of(profile));
  }

  std::string summarize(const Case& c) const override { return ascend::summarize(c); }
  int own_non_default_fields(const Case& c) const override {
    const Fields* f = fields_of(c);
    return f ? ascend::own_non_default_fields(*f) : 0;
  }
  void describe_own_changes(const Case& before, const Case& after, const ChangeItem& item) const override {
    if (fields_of(before) && fields_of(after)) ascend::describe_own_changes(*fields_of(before), *fields_of(after), item);
  }
  std::string capture_layout_text(const Case& c) const override { return ascend::capture_layout_text(c); }

  // A gathered tensor holds at most D blocks of T*ceil(max/T) rows.
  int64_t most_buffer_rows(const Case& c) const override {
    int64_t largest = 0;
    for (int64_t n : derive_counts(c)) largest = std::max(largest, n);
    const int64_t T = c.topology.tp;
    return std::max(c.max_num_tokens, c.topology.dp * T * ceil_div(std::max<int64_t>(largest, T), T));
  }
  bool small_enough_to_materialise(const Case& c) const override { return most_buffer_rows(c) <= kMaterialisedMaxTokens; }

  std::span<const PolicyInfo> policies() const override { return kPolicies; }
  std::vector<std::string_view> released_policies() const override { return {kPolicyMain, kPolicy026}; }
  std::string_view fixed_policy() const override { return kPolicyFixed; }

  bool has_fault(Fault f) const override { return ascend::has_fault(f); }
  std::span<const FaultEntry> own_faults() const override { return ascend::own_faults(); }
  void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) const override {
    ascend::apply_decision_fault(f, call, out);
  }
  void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out) const override {
    ascend::decide_with_fault(base, f, call, out);
  }
};

}  // namespace

const EngineModel& model() {
  static const AscendModel instance;
  return instance;
}

Engine engine() {
  static const Engine handle = Engine::of(model());
  return handle;
}

}  // namespace r3::ascend
