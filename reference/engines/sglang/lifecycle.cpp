// The versions and patches of SGLang's lifecycle. Sources: upstream main (nokiaMS/sglang @
// 30cb848d4b455a288a37cfeb6a45aff34f5634a6) and sglang-miles (guapisolo/sglang @
// c447264eba460045e6e961fd7cf1bfbaf038db6b), paths under python/sglang/srt/, as
// docs/lifecycle-contract.md cites them.
#include "reference/engines/sglang/lifecycle.hpp"

#include <string>
#include <vector>

#include "reference/engines/sglang/lifecycle_check.hpp"
#include "reference/engines/sglang/lifecycle_run.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/lifecycle_step_case.hpp"
#include "reference/layout.hpp"

namespace r3::sglang {
namespace {

constexpr LifecycleVersion kVersions[] = {
    {"sglang", "sglang", "SGLang upstream main at 30cb848 (nokiaMS/sglang)", "sglang", true},
    {"sglang-miles", "sglang-miles",
     "sglang-miles at c447264 (guapisolo/sglang): upstream's lifecycle plus the P/D prefill rows spliced in by mini_lb",
     "sglang-miles", true},
    {"sglang-fixed", "sglang-fixed", "the SGLang lifecycle this project proposes: upstream with every lifecycle patch",
     "sglang", false},
};

// In TracePatch order (lifecycle_behaviour.hpp).
constexpr LifecyclePatch kPatches[] = {
    {"offload-rows",
     "route rows move with the KV into new slots, on a P/D decode retract restored from host (schedule_batch.py: "
     "Req.offload_kv_cache, Req.load_kv_cache; disaggregation/decode.py: resume_retracted_reqs) and on a HiCache "
     "load-back (nothing under mem_cache/ touches the capturer) @ 30cb848"},
    {"pd-prompt-rows",
     "the P/D decode instance holds the prefill's prompt rows at the slots the KV lands in (disaggregation/decode.py: "
     "_run_batch_prebuilt; batch_result_processor.py: process_batch_result_prebuilt carries no rows; prefill.py: "
     "process_batch_result_disagg_prefill only finalizes them) @ 30cb848; sglang-miles c447264 splices them in with "
     "mini_lb only (mini_lb.py: _merge_routed_experts)"},
    {"tree-accept-rows",
     "a tree verify moves the accepted route rows with the accepted KV (speculative/eagle_worker_common.py: "
     "_finalize_accept_tree_path; spec_utils.py: move_accept_tokens_to_target_kvcache; ngram_worker.py: "
     "NGRAMWorker.forward_batch_generation) @ 30cb848"},
    {"ngram-overlap-capture",
     "NGRAM's GenerationBatchResult carries routed_experts_output, so its forwards reach the host cache under the "
     "overlap scheduler (speculative/ngram_worker.py: NGRAMWorker.forward_batch_generation) @ 30cb848"},
    {"overlap-copy-race",
     "the deferred device-to-host copy reads a clone of its forward's rows, not a view the next forward overwrites "
     "(state_capturer/base.py: BaseTopkCapturer.on_forward_end; managers/utils.py: GenerationBatchResult.copy_to_cpu) "
     "@ 30cb848"},
    {"aborted-rows",
     "a started request aborted while it is not decoding (retracted to the waiting queue, offloaded, or in the middle "
     "of a chunked prefill) answers with the rows of its forwards, not with none (scheduler.py: abort_request, the "
     "waiting-queue and retracted-queue branches, and process_pending_chunked_abort; schedule_batch.py: "
     "Req.reset_for_retract drops them) @ 30cb848"},
};
static_assert(std::size(kPatches) == kTracePatchCount);

class SglangLifecycle final : public LifecycleModel {
 public:
  std::span<const LifecycleVersion> versions() const override { return kVersions; }
  std::span<const LifecyclePatch> patches() const override { return kPatches; }

  std::vector<int> missing_patches(std::string_view version) const override {
    const std::optional<Behaviour> b = behaviour_of(version, {});
    std::vector<int> out;
    if (!b) return out;
    for (int i = 0; i < kTracePatchCount; ++i)
      if (!b->has(static_cast<TracePatch>(i))) out.push_back(i);
    return out;
  }

  Status check(const Trace& t, const Timeline& timeline) const override { return check_lifecycle_trace(t, timeline); }
  Status check_profile(const Trace& t, const Timeline& timeline, Profile profile) const override {
    return check_lifecycle_profile(t, timeline, profile);
  }

  std::optional<Case> step_case(const Trace& t, const Timeline& timeline, int step) const override {
    return step_case_in(t, timeline, step, trace_profile(t));
  }
  std::vector<std::optional<Case>> step_cases(const Trace& t, const Timeline& timeline) const override {
    return step_cases_in(t, timeline, trace_profile(t));
  }
  // The forward's padded batch (layout.cpp, derive_forward): run() reads it from the delivery.
  std::vector<int64_t> forward_rows(const Step& step) const override {
    const ForwardLayout* f = forward_of(step);
    return f ? f->padded : std::vector<int64_t>{};
  }

  LifecycleOutcome run(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                       std::string_view version, std::span<const int> applied) const override {
    const std::optional<Behaviour> b = behaviour_of(version, applied);
    R3_CHECK(b.has_value(), "run() takes one of versions() and indices into patches()");
    WalkResult walked = walk_trace(t, timeline, delivery, *b);
    if (walked.refused_at) {
      // What the engine does on a step it never runs as asked: the one it really reaches is the
      // flush assertion; the others stop the model where check_profile() would have refused.
      walked.outcome.crash_step = *walked.refused_at;
      walked.outcome.crash = "step " + std::to_string(*walked.refused_at) + ": " + walked.refusal;
    }
    return std::move(walked.outcome);
  }
};

}  // namespace

std::optional<Behaviour> behaviour_of(std::string_view name, std::span<const int> applied) {
  Behaviour b;
  if (name == "sglang-miles") {
    b.mini_lb_splice = true;
  } else if (name == "sglang-fixed") {
    b.fixed.set();
  } else if (name != "sglang") {
    return std::nullopt;
  }
  for (const int i : applied) {
    if (i < 0 || i >= kTracePatchCount) return std::nullopt;
    b.fixed.set(static_cast<size_t>(i));
  }
  return b;
}

const LifecycleModel& lifecycle_model() {
  static const SglangLifecycle instance;
  return instance;
}

}  // namespace r3::sglang
