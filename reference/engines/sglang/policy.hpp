// Models of SGLang's routed-experts capture (docs/layout-contract.md section 11), as capture
// policies: capture writes the whole tensor at row 0 of the device buffer
// (state_capturer/base.py, BaseDeviceCache.capture; DeepEP gathers over attn-TP first:
// state_capturer/routed_experts.py, RoutedExpertsCapturer.capture), and once per forward a
// window (start, n) picks this DP rank's rows (RoutedExpertsCapturer._get_local_slice), stored
// at the forward's KV slots (base.py, on_forward_end). Each decision is one call's write seen
// through the window: buffer row start + j becomes published row j.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "reference/case.hpp"
#include "reference/policy.hpp"

namespace r3::sglang {

enum class Version {
  upstream,  // "sglang": upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6
  miles,     // "sglang-miles": the RL branch at c447264eba460045e6e961fd7cf1bfbaf038db6b
  fixed,     // "sglang-fixed": the fix this project proposes (docs/FINDINGS.md)
};

std::unique_ptr<CapturePolicy> make_policy(Version version);

// sglang-fixed's branch: each call writes its rows at their place in the rank's batch and the
// window is [0, n_r). Every other SGLang branch writes the whole tensor at row 0 and reads a
// window of it (the GPU pipeline lays its kernels out by this).
inline constexpr std::string_view kWriteAtOffset = "write_at_offset";
inline bool writes_at_offset(const CaptureDecision& d) { return d.branch == kWriteAtOffset; }

// The device buffer's rows. Upstream and miles: max(cps * dp, mrr * dp), mrr * dp with chunking
// off (routed_experts.py, RoutedExpertsCapturer.__init__; "FIXME: spec decoding's
// num_verify_tokens is still not accounted for"). Fixed: dp times the largest aligned batch a
// rank can run (a prefill chunk, max_running_requests * w, the largest decode bucket * w).
int64_t buffer_rows(const Case& c, Version version);

}  // namespace r3::sglang
