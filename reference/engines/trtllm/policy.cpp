// Models of TensorRT-LLM's per-step capture (route_capture.py: RouteCapture._capture; contract
// R1). The hook receives the router's [n, K] top-k of one MoE call in forward row order and
// writes it into the device buffer [max_num_tokens, L, K] at the layer's index, clamping the
// rows to the buffer (no error), and skipping a layer it has no index for.
//
// The versions differ in one place: a multi-chunk MoE call (more rows than the MoE's chunk size)
// hands the hook chunk-local rows once per chunk. L (aa94b01) writes each chunk at its row
// offset; E (06a976ce) has no offset and writes every chunk at row 0, so the last chunk's rows
// overwrite the first ones' (read for this file in both stored copies). Profile trtllm holds one
// MoE call per layer (profile.cpp): the base case has no MoE chunk field, so within it the three
// models decide alike, and E's chunk defect is named here but not reachable by a case yet.
#include "reference/engines/trtllm/policy.hpp"

#include <algorithm>
#include <string>

#include "reference/engines/trtllm/model.hpp"

namespace r3::trtllm {
namespace {

class TrtllmCapture final : public CapturePolicy {
 public:
  explicit TrtllmCapture(std::string_view name, bool chunk_offset) : name_(name), chunk_offset_(chunk_offset) {}
  std::string_view name() const override { return name_; }
  bool reads_tp_rank() const override { return false; }
  Engine engine() const override { return trtllm::engine(); }

  // RouteCapture._ensure_buffer: [max_num_tokens, L, K] int32.
  Allocation allocate(const Case& c) const override {
    Allocation a;
    a.capture_rows = c.max_num_tokens;
    return a;
  }

  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    out.branch = branch::single;
    // _capture: a layer without an index in the buffer is skipped.
    if (call.layer < 0 || call.layer >= call.capture_buffer.layers) {
      out.branch = branch::skip;
      return;
    }
    // E writes at row 0 whatever the call's offset; L and the fix at the call's row offset.
    const int64_t dst = chunk_offset_ ? std::max<int64_t>(call.row_offset, 0) : 0;
    const int64_t rows = std::min(call.rows, call.capture_buffer.rows - dst);
    if (rows > 0) out.copies.push_back({dst, 0, rows, false});
  }

 private:
  std::string_view name_;
  bool chunk_offset_;
};

}  // namespace

std::unique_ptr<CapturePolicy> make_policy_e() { return std::make_unique<TrtllmCapture>(kPolicyE, false); }
std::unique_ptr<CapturePolicy> make_policy_l() { return std::make_unique<TrtllmCapture>(kPolicyL, true); }
std::unique_ptr<CapturePolicy> make_policy_fixed() { return std::make_unique<TrtllmCapture>(kPolicyFixed, true); }

}  // namespace r3::trtllm
