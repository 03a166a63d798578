// Models of SGLang's routed-experts capture (docs/layout-contract.md section 11), as capture
// policies: capture writes the whole tensor at row 0 of the device buffer
// (state_capturer/base.py, BaseDeviceCache.capture; DeepEP gathers over attn-TP first:
// state_capturer/routed_experts.py, RoutedExpertsCapturer.capture), and once per forward a
// window (start, n) picks this DP rank's rows (RoutedExpertsCapturer._get_local_slice), stored
// at the forward's KV slots (base.py, on_forward_end). Each decision is one call's write seen
// through the window: buffer row start + j becomes published row j.
//
// The three versions differ by named patches, each one change of the proposed fix: upstream has
// none, sglang-miles one (window-token-bucket), sglang-fixed all. A finding's root cause is the
// patch that repairs it (fuzz/oracle/root_cause.hpp).
#pragma once

#include <bitset>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "reference/case.hpp"
#include "reference/policy.hpp"

namespace r3::sglang {

enum class Patch : uint8_t {
  window_token_bucket,   // a decode/verify graph's window at r * bs * w, the token bucket (sglang-miles has it)
  prefill_graph_window,  // a prefill graph's window from the prefix sums, not from the decode runner's bs
  gather_scattered,      // every scattered a2a backend's capture gathers the attn-TP slices, as DeepEP's does
  tbo_offsets,           // each TBO child written at its rows' offset, its window from its own counts
  buffer_rows,           // the buffer sized for every tensor: spec width, attn-TP alignment, unchunked prefill
};
inline constexpr int kPatchCount = 5;
using Patches = std::bitset<kPatchCount>;

std::string_view to_string(Patch patch);   // "window-token-bucket", ...
std::string_view describe(Patch patch);    // one line, in the engine's terms
std::span<const Patch> all_patches();

enum class Version {
  upstream,  // "sglang": upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6
  miles,     // "sglang-miles": the RL branch at c447264eba460045e6e961fd7cf1bfbaf038db6b
  fixed,     // "sglang-fixed": the fix this project proposes (docs/FINDINGS.md)
};
Patches patches_of(Version version);

std::unique_ptr<CapturePolicy> make_policy(Version version);

// True when the decision's call is read through its own window right after it (tbo-offsets on a
// step of several calls): its copies then land where they are published, at their rows' offset.
// Otherwise the call writes its whole tensor at row 0 and one window reads the buffer after the
// last call (the GPU pipeline lays its kernels out by this).
inline bool writes_at_offset(const CaptureDecision& d) { return d.window && d.window->per_call; }

// The device buffer's rows. Without buffer-rows: max(cps * dp, mrr * dp), mrr * dp with chunking
// off (routed_experts.py, RoutedExpertsCapturer.__init__; "FIXME: spec decoding's
// num_verify_tokens is still not accounted for"). With it: dp times the largest aligned batch a
// rank can run (a prefill chunk, max_running_requests * w, the largest decode bucket * w).
int64_t buffer_rows(const Case& c, Version version);
int64_t buffer_rows(const Case& c, const Patches& patches);

}  // namespace r3::sglang
