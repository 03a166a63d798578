// What one SGLang lifecycle version does where versions differ (docs/lifecycle-contract.md 2.1,
// 2.2): the lifecycle patches it has (each one fix between upstream main and the fixed model)
// and sglang-miles' own P/D splice. lifecycle.cpp names the versions and patches; the walk
// (lifecycle_run.cpp) reads only this.
#pragma once

#include <bitset>
#include <cstdint>
#include <span>
#include <string_view>

namespace r3::sglang {

// The lifecycle patches, in LifecycleModel::patches() order. Not the per-step Patch of
// policy.hpp: these act on the host cache and on req_to_token, after the capture's window.
enum class TracePatch : uint8_t {
  offload_rows,           // route rows move with the KV into new slots (P/D retract restore, HiCache load-back)
  pd_prompt_rows,         // the P/D decode instance holds the prefill's rows for the prompt
  tree_accept_rows,       // the tree verify's accepted route rows move with the accepted KV
  ngram_overlap_capture,  // NGRAM's forwards hand their capture on under the overlap scheduler
  overlap_copy_race,      // the deferred device-to-host copy reads a clone of its own forward's rows
  aborted_rows,           // an aborted request that is not decoding answers with the rows of its forwards
};
inline constexpr int kTracePatchCount = 6;

struct Behaviour {
  std::bitset<kTracePatchCount> fixed;  // the patches in
  // sglang-miles M1 + M2: the prefill instance returns its prompt rows and mini_lb splices them
  // over the decode instance's (only when the trace's router is mini_lb).
  bool mini_lb_splice = false;
  bool has(TracePatch p) const { return fixed.test(static_cast<size_t>(p)); }
};

}  // namespace r3::sglang
