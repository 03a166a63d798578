// vLLM's lifecycle model: its versions, its patches and which version lacks which
// (lifecycle.hpp). The walks are lifecycle_blocks.cpp and lifecycle_slots.cpp, the rules
// lifecycle_check.cpp, the per-step case lifecycle_step_case.cpp.
#include "reference/engines/vllm/lifecycle.hpp"

#include <algorithm>
#include <array>

#include "reference/engines/vllm/lifecycle_rules.hpp"
#include "reference/engines/vllm/lifecycle_versions.hpp"

namespace r3::vllm {
namespace {

// The pre-50874 version runs profile vllm-legacy: that profile is the releases before PR
// #39107 (MoE DP chunking, reference/engines/vllm/profile.cpp), which all capture with the
// pre-50874 policy, and its case space holds profile vllm's, so it also covers the releases
// between #39107 and #50874. Its per-step policy and this lifecycle (#28284's slot-keyed
// buffer) are the ones those releases shipped (contract N10).
constexpr std::array kVersions = {
    LifecycleVersion{"vllm-50874", "vllm-50874",
                     "vLLM main: the AuxOutput connector (#45635; worker.py @ f99d53b, connector.py @ 09155ae, "
                     "store.py @ 159bfe5)",
                     "vllm", true},
    LifecycleVersion{"vllm-pre-50874", "vllm-pre-50874",
                     "vLLM releases: the slot-keyed host buffer of #28284 (Scheduler._get_routed_experts @ b4622cf)",
                     "vllm-legacy", true},
    LifecycleVersion{"r3-fixed", "r3-fixed",
                     "the fixed model: each row keyed by the KV it describes and moved with it", "vllm", false},
};

constexpr std::array kPatches = {
    LifecyclePatch{"generation-on-weight-update",
                   "route blocks are keyed by (generation, block hash) and the generation rises only on a "
                   "prefix-cache reset (connector.py: AuxOutputSchedulerConnector.reset @ 09155ae), and an "
                   "object already stored keeps its key (store.py: BlockObjectStore.put @ 159bfe5): KV "
                   "recomputed under new weights without a reset is read back as the old weights' rows while "
                   "the old object stays in the store (contract N9, T2); fixed by keying each block by the "
                   "weight version of its KV"},
    LifecyclePatch{"preempt-reemit",
                   "a request resumed after a preemption emits from num_tokens - 1 (connector.py: "
                   "build_connector_meta @ 09155ae; contract N4 (a)), so the rows it streamed before stand "
                   "although its recompute may run at another weight version (T2); fixed by streaming again "
                   "from routed_experts_prompt_start"},
    LifecyclePatch{"offload-rows",
                   "rows are read at finish through the current block table (scheduler.py: "
                   "Scheduler._get_routed_experts @ b4622cf; contract 2.4 V1): KV restored from host into new "
                   "blocks finds their old rows; fixed by moving the rows with the KV (as "
                   "RoutedExpertsManager.apply_offload_transfers, manager.py @ 1291121)"},
    LifecyclePatch{"pd-rows",
                   "the decode instance never writes the slots of the prompt KV a prefill instance sends "
                   "(scheduler.py: Scheduler._get_routed_experts @ b4622cf; contract 2.4 V1, spec 4.2): stale "
                   "prompt rows; fixed by sending the prefill instance's rows with its KV"},
    LifecyclePatch{"preempted-rows",
                   "a preemption frees the request's blocks and the rows are read at finish through the block "
                   "table (scheduler.py: Scheduler._get_routed_experts @ b4622cf; contract 2.4 V1): a request "
                   "aborted before its recompute reaches a position returns zeros there, not the rows its "
                   "earlier forwards computed; fixed by keeping those rows until the recompute replaces them"},
    LifecyclePatch{"store-capacity",
                   "the store holds one object per KV block when aux_output_config.max_bytes is unset "
                   "(worker.py: AuxOutputWorkerConnector.__init__ @ f99d53b), but every request retains the "
                   "keys of all the full blocks of its known tokens (connector.py: build_connector_meta @ "
                   "09155ae; worker.py: begin_step), the blocks of a preempted request or of one still "
                   "finishing included; when more keys are retained than objects fit, a put fails closed "
                   "(store.py: BlockObjectStore._evict_to_fit @ 159bfe5, BlockObjectStoreError); fixed by "
                   "sizing the store for every key its requests can retain"},
};

class VllmLifecycle final : public LifecycleModel {
 public:
  std::span<const LifecycleVersion> versions() const override { return kVersions; }
  std::span<const LifecyclePatch> patches() const override { return kPatches; }

  std::vector<int> missing_patches(std::string_view version) const override {
    if (version == "vllm-50874") return {kPatchGenerationOnWeightUpdate, kPatchPreemptReemit, kPatchStoreCapacity};
    if (version == "vllm-pre-50874") return {kPatchOffloadRows, kPatchPdRows, kPatchPreemptedRows};
    return {};
  }

  Status check(const Trace& t, const Timeline& timeline) const override { return check_trace(t, timeline); }
  Status check_profile(const Trace& t, const Timeline& timeline, Profile profile) const override {
    return check_trace_profile(t, timeline, profile);
  }
  std::optional<Case> step_case(const Trace& t, const Timeline& timeline, int step) const override {
    return trace_step_case(t, timeline, step);
  }

  LifecycleOutcome run(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                       std::string_view version, std::span<const int> applied) const override {
    auto has = [&](int patch) { return std::find(applied.begin(), applied.end(), patch) != applied.end(); };
    if (version == "vllm-50874") {
      return run_block_store(t, timeline, delivery,
                             {has(kPatchGenerationOnWeightUpdate), has(kPatchPreemptReemit),
                              has(kPatchStoreCapacity)});
    }
    if (version == "vllm-pre-50874") {
      return run_slots(t, timeline, delivery, {has(kPatchOffloadRows), has(kPatchPdRows), false, has(kPatchPreemptedRows)});
    }
    if (version == "r3-fixed") return run_slots(t, timeline, delivery, {true, true, true, true});
    LifecycleOutcome unknown;
    unknown.requests.resize(t.requests.size());
    unknown.crash_step = 0;
    unknown.crash = "step 0: no vLLM lifecycle version \"" + std::string(version) + "\"";
    return unknown;
  }
};

}  // namespace

const LifecycleModel& lifecycle_model() {
  static const VllmLifecycle instance;
  return instance;
}

}  // namespace r3::vllm
