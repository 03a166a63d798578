// The TensorRT-LLM engine's model: the base case and layout (model.hpp), its profile, its three
// per-step capture models and its request lifecycle.
#include "reference/engines/trtllm/model.hpp"

#include <algorithm>

#include "reference/case_measure.hpp"
#include "reference/engines/trtllm/lifecycle.hpp"
#include "reference/engines/trtllm/policy.hpp"
#include "reference/engines/trtllm/profile.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"

namespace r3::trtllm {
namespace {

constexpr ProfileInfo kProfiles[] = {
    {"trtllm", "TensorRT-LLM with PR #18397's route capture"},
};

// The later stored version first: the engine's current model, as vLLM's and SGLang's mains are.
constexpr PolicyInfo kPolicies[] = {
    {kPolicyL, "TensorRT-LLM's route capture, later stored version @ aa94b01 (model)", make_policy_l},
    {kPolicyE, "TensorRT-LLM's route capture @ 06a976ce (model)", make_policy_e},
    {kPolicyFixed, "TensorRT-LLM's route capture, fixed (model)", make_policy_fixed},
};

class TrtllmModel final : public EngineModel {
 public:
  std::string_view name() const override { return "trtllm"; }
  std::span<const ProfileInfo> profiles() const override { return kProfiles; }

  Status validate(const Case& c) const override {
    if (c.engine_fields) return Error{"engine: a trtllm case carries another engine's fields"};
    return validate_base(c);
  }
  Status derive_step_into(Step& s, const Case& c) const override { return derive_base_step_into(s, c); }

  Status check_profile(const Case& c, Profile profile) const override {
    if (profile.is_any()) return ok_status();
    return check_step_profile(c);
  }
  Case fit_to_profile(Case c, Profile profile) const override {
    if (profile.is_any()) return c;
    return fit_step_to_profile(std::move(c));
  }

  std::string summarize(const Case& c) const override { return summarize_base(c); }

  int64_t most_buffer_rows(const Case& c) const override {
    int64_t most = c.max_num_tokens;
    for (int64_t n : derive_num_tokens_across_dp(c)) most = std::max(most, c.topology.tp * ceil_div(n, c.topology.tp));
    return most;
  }
  bool small_enough_to_materialise(const Case& c) const override { return c.max_num_tokens <= 64; }

  std::span<const PolicyInfo> policies() const override { return kPolicies; }
  std::vector<std::string_view> released_policies() const override { return {kPolicyL, kPolicyE}; }
  std::string_view fixed_policy() const override { return kPolicyFixed; }

  // The mutant table's faults are vLLM's and SGLang's capture paths; none is TensorRT-LLM's.
  bool has_fault(Fault) const override { return false; }
  void apply_decision_fault(Fault, const CaptureCall&, CaptureDecision&) const override {}
  void decide_with_fault(const CapturePolicy& base, Fault, const CaptureCall& call, CaptureDecision& out) const override {
    base.decide(call, out);
  }

  const LifecycleModel* lifecycle() const override { return &lifecycle_model(); }
};

}  // namespace

const EngineModel& model() {
  static const TrtllmModel instance;
  return instance;
}

Engine engine() {
  static const Engine handle = Engine::of(model());
  return handle;
}

}  // namespace r3::trtllm
