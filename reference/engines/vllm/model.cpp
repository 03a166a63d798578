// The vLLM engine's model: the base case and layout, with vLLM's profiles, policies and faults.
#include "reference/engines/vllm/model.hpp"

#include <algorithm>

#include "reference/case_measure.hpp"
#include "reference/engines/vllm/faults.hpp"
#include "reference/engines/vllm/lifecycle.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "reference/engines/vllm/profile.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"

namespace r3::vllm {
namespace {

constexpr ProfileInfo kProfiles[] = {
    {"vllm", "current vLLM main"},
    {"vllm-legacy", "vLLM with MoE DP chunking"},
};

constexpr PolicyInfo kPolicies[] = {
    {"vllm-50874", "vLLM's capture policy after PR #50874 (model)", make_vllm_50874_policy},
    {"vllm-pre-50874", "vLLM's capture policy before PR #50874 (model)", make_vllm_pre_50874_policy},
    {"r3-fixed", "the capture policy this project proposes", make_r3_fixed_policy},
};

Variant variant_of(Profile profile) { return profile.variant() == 1 ? Variant::legacy : Variant::main; }

class VllmModel final : public EngineModel {
 public:
  std::string_view name() const override { return "vllm"; }
  std::span<const ProfileInfo> profiles() const override { return kProfiles; }

  Status validate(const Case& c) const override {
    if (c.engine_fields) return Error{"engine: a vllm case carries another engine's fields"};
    return validate_base(c);
  }
  Status derive_step_into(Step& s, const Case& c) const override { return derive_base_step_into(s, c); }

  Status check_profile(const Case& c, Profile profile) const override { return vllm::check_profile(c, variant_of(profile)); }
  Case fit_to_profile(Case c, Profile profile) const override { return vllm::fit_to_profile(std::move(c), variant_of(profile)); }
  // PR #39107 removed MoE DP chunking; the releases before it (vllm-legacy) chunk.
  bool chunks_dp(Profile profile) const override { return variant_of(profile) == Variant::legacy; }
  bool may_microbatch(const Case& c, Profile) const override { return vllm::may_microbatch(c); }

  std::string summarize(const Case& c) const override { return summarize_base(c); }

  int64_t most_buffer_rows(const Case& c) const override {
    int64_t most = c.max_num_tokens;
    for (int64_t n : derive_num_tokens_across_dp(c)) most = std::max(most, c.topology.tp * ceil_div(n, c.topology.tp));
    return most;
  }
  bool small_enough_to_materialise(const Case& c) const override { return c.max_num_tokens <= kMaterialisedMaxTokens; }

  std::span<const PolicyInfo> policies() const override { return kPolicies; }
  std::vector<std::string_view> released_policies() const override { return {"vllm-50874", "vllm-pre-50874"}; }
  std::string_view fixed_policy() const override { return "r3-fixed"; }

  bool has_fault(Fault f) const override { return vllm::has_fault(f); }
  void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) const override {
    vllm::apply_decision_fault(f, call, out);
  }
  void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out) const override {
    vllm::decide_with_fault(base, f, call, out);
  }

  // The request lifecycle: vllm-50874, vllm-pre-50874 and r3-fixed (lifecycle.hpp).
  const LifecycleModel* lifecycle() const override { return &lifecycle_model(); }
};

}  // namespace

const EngineModel& model() {
  static const VllmModel instance;
  return instance;
}

Engine engine() {
  static const Engine handle = Engine::of(model());
  return handle;
}

}  // namespace r3::vllm
