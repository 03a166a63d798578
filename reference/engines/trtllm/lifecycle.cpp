// TensorRT-LLM's lifecycle model: its versions, its patches and which version lacks which
// (lifecycle.hpp). The walk is lifecycle_run.cpp over lifecycle_capture.cpp; the rules
// lifecycle_check.cpp; the per-step case lifecycle_step_case.cpp.
#include "reference/engines/trtllm/lifecycle.hpp"

#include <algorithm>
#include <array>

#include "reference/engines/trtllm/lifecycle_rules.hpp"
#include "reference/engines/trtllm/lifecycle_walk.hpp"
#include "reference/engines/trtllm/policy.hpp"
#include "reference/trace/copies.hpp"

namespace r3::trtllm {
namespace {

constexpr std::array kVersions = {
    LifecycleVersion{kVersionL, kPolicyL,
                     "TensorRT-LLM PR #18397, later stored version: route_capture.py @ aa94b01 (stored copy 68348127803)",
                     "trtllm", true},
    LifecycleVersion{kVersionE, kPolicyE,
                     "TensorRT-LLM PR #18397 as the spec read it: route_capture.py @ 06a976ce (stored copy 57903209176)",
                     "trtllm", true},
    LifecycleVersion{kVersionFixed, kPolicyFixed,
                     "the fixed model: rows follow the KV, positions from the request, the range cut at S - 1",
                     "trtllm", false},
};

constexpr std::array kPatches = {
    LifecyclePatch{"store-follows-kv",
                   "RouteCapture.commit keeps the first row ever stored at (request, position) (route_capture.py @ "
                   "06a976ce, aa94b01; contract R3) and a preempted request's hit is never read back again "
                   "(_readback_prefix marks it done): a recompute at another weight version, or a re-prefill that "
                   "hits another forward's KV, returns the old rows (T2); fixed by letting the recompute's or the "
                   "new hit's rows replace them"},
    LifecyclePatch{"decode-position",
                   "RouteCapture._prepare places a generation row at P + a private counter that rises with every "
                   "decode row and is never reset (route_capture.py @ 06a976ce, aa94b01; contract R2, N2 reading "
                   "(a)): after KV eviction and a re-prefill through the last token, every later decode row lands "
                   "one position early and write-once keeps the wrong rows; fixed by taking the row's input "
                   "position from the request"},
    LifecyclePatch{"inclusive-range",
                   "RouteCapture.assemble @ 06a976ce returns positions [0, highest stored), dropping the highest "
                   "stored row (contract R6): a request that does not run one step past its finish comes back a "
                   "row short; fixed as aa94b01 does, [0, highest stored]"},
    LifecyclePatch{"range-to-finish",
                   "RouteCapture.assemble never compares its range with S - 1 and returns nothing when the highest "
                   "stored position is 0 (route_capture.py @ 06a976ce, aa94b01; contract R6, N3 reading (a)): the "
                   "row of position S - 1 that the overlap scheduler's extra step commits comes back (a row too "
                   "many at aa94b01), and a request whose only stored position is 0 gets no routes; fixed by "
                   "assembling [0, S - 1)"},
    LifecyclePatch{"shared-cache-epoch",
                   "RouteCapture.clear_shared drops the SharedRouteCache and every populate cursor but keeps the "
                   "stores (route_capture.py @ 06a976ce, aa94b01; contract R4), so the next _incremental_populate "
                   "pushes rows forwarded before the reset into the new cache, and a later hit reads the old "
                   "weights' rows; fixed by caching only rows forwarded since the reset"},
    LifecyclePatch{"cache-every-row",
                   "RouteCapture._store_positions pushes only the prompt region into the SharedRouteCache "
                   "(route_capture.py @ 06a976ce, aa94b01; contract R4): a hit on positions another request "
                   "computed as outputs (a resumed conversation) is never filled, and assemble raises on the gap "
                   "(E: no routes); fixed by caching every forwarded row and draining before a read-back"},
    LifecyclePatch{"commit-before-reuse",
                   "RouteCopier.stage @ 06a976ce reuses a ring slot whose copy is still pending without "
                   "committing it (contract R9): the later drain commits the new rows under the old layout; fixed "
                   "as aa94b01 does, by draining and committing the slot before reuse"},
};

Behaviour behaviour(std::string_view version, std::span<const int> applied) {
  auto has = [&](int patch) { return std::find(applied.begin(), applied.end(), patch) != applied.end(); };
  const bool fixed = version == kVersionFixed;
  const bool later = version == kVersionL;
  Behaviour b;
  b.store_follows_kv = fixed || has(kPatchStoreFollowsKv);
  b.decode_position = fixed || has(kPatchDecodePosition);
  b.inclusive_range = fixed || later || has(kPatchInclusiveRange);
  b.range_to_finish = fixed || has(kPatchRangeToFinish);
  b.shared_cache_epoch = fixed || has(kPatchSharedCacheEpoch);
  b.cache_every_row = fixed || has(kPatchCacheEveryRow);
  b.commit_before_reuse = fixed || later || has(kPatchCommitBeforeReuse);
  // attach_routes @ 06a976ce swallows every exception; @ aa94b01 they reach the executor [R7].
  // The fixed model fails closed like aa94b01.
  b.raise_on_gap = fixed || later;
  return b;
}

class TrtllmLifecycle final : public LifecycleModel {
 public:
  std::span<const LifecycleVersion> versions() const override { return kVersions; }
  std::span<const LifecyclePatch> patches() const override { return kPatches; }

  std::vector<int> missing_patches(std::string_view version) const override {
    if (version == kVersionE) {
      return {kPatchStoreFollowsKv,  kPatchDecodePosition, kPatchInclusiveRange,   kPatchRangeToFinish,
              kPatchSharedCacheEpoch, kPatchCacheEveryRow, kPatchCommitBeforeReuse};
    }
    if (version == kVersionL) {
      return {kPatchStoreFollowsKv, kPatchDecodePosition, kPatchRangeToFinish, kPatchSharedCacheEpoch,
              kPatchCacheEveryRow};
    }
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
    if (version != kVersionE && version != kVersionL && version != kVersionFixed) {
      LifecycleOutcome unknown;
      unknown.requests.resize(t.requests.size());
      unknown.crash_step = 0;
      unknown.crash = "step 0: no trtllm lifecycle version \"" + std::string(version) + "\"";
      return unknown;
    }
    // The trace's copies record (reference/trace/copies.hpp): D of every step's copy.
    const std::vector<int> done_before = completion_steps(t);
    return walk(t, timeline, delivery, behaviour(version, applied), done_before);
  }
};

}  // namespace

const LifecycleModel& lifecycle_model() {
  static const TrtllmLifecycle instance;
  return instance;
}

}  // namespace r3::trtllm
