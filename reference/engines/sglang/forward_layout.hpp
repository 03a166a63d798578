// What one SGLang forward looks like to the capturer (docs/layout-contract.md section 11): the
// capture layout of the MoE input, the padding of every DP rank, and the forward-end inputs of
// the window (state_capturer/routed_experts.py, _get_local_slice). layout.hpp derives it; a
// Step carries it, and the SGLang policies read it through CaptureCall::engine_step (fields.hpp).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "reference/engines/sglang/forward.hpp"
#include "reference/rows.hpp"

namespace r3::sglang {

// The rows of the contract's table in section 3 (../shared/spec/sglang-contract.md): what
// topk_ids holds when capture_routed_experts_if_allowed (layers/moe/topk.py) runs. It is the
// "path" of an SGLang signature.
enum class CaptureLayout : uint8_t {
  local_batch,    // no DP attention, a2a none: the rank's padded batch
  dp_max_len,     // DP attention, a2a none, MAX_LEN: dp segments of max(a) (_dp_gather_via_all_gather)
  dp_sum_len,     // DP attention, a2a none, SUM_LEN: every a_r concatenated (_dp_gather_via_all_reduce)
  dp_graph,       // DP attention, a2a none, decode/verify graph replay: dp segments of bs*w
  deepep_gather,  // a2a deepep: the attn-TP slice, all-gathered by the capturer into gather_buffer
  attn_tp_slice,  // any other a2a backend: the attn-TP slice (the whole batch when attn_tp = 1)
};
std::string_view to_string(CaptureLayout layout);

// layers/dp_attention.py, DpPaddingMode (none: no DP attention, so no DP padding at all).
enum class DpPadding : uint8_t { none, max_len, sum_len };
std::string_view to_string(DpPadding padding);

struct ForwardLayout {
  CaptureLayout capture = CaptureLayout::local_batch;
  DpPadding padding = DpPadding::none;
  bool dp_attention = false;
  A2a a2a = A2a::none;
  ForwardKind kind = ForwardKind::extend;
  bool decode_graph = false;   // a decode/verify CUDA-graph replay
  bool prefill_graph = false;  // a breakable prefill CUDA graph (BCG) run
  bool can_run_graph() const { return decode_graph || prefill_graph; }  // model_runner.py, _forward_raw
  int64_t spec_width = 1;      // w, the runner's captured_req_width
  // Per DP rank, the runner's `bs` attribute at forward end: this forward's decode bucket (it
  // is set at replay), else the last replay's (last_decode_bucket), else -1 (never replayed).
  std::vector<int64_t> runner_bs;
  std::vector<int64_t> tokens;                 // n_r: real tokens of the forward
  std::vector<int64_t> padded;                 // P_r: rows of rank r's batch at the MoE layer
  std::vector<int64_t> global_num_tokens_cpu;  // forward_batch.global_num_tokens_cpu
  // The counts a window reads, with their prefix sums (a window starts at the sum of the counts
  // before its rank; summing per rank cost O(D) a rank, O(D^2) a case). `forward`:
  // global_num_tokens_cpu; per call, `child`: what a TBO child's own forward batch counts (a
  // child counts its own rows; a graph replay keeps raw counts), read under tbo-offsets.
  struct WindowCounts {
    std::vector<int64_t> count;   // per DP rank
    std::vector<int64_t> before;  // D + 1 entries: before[r] = count[0] + ... + count[r - 1]
    void index();                 // fills `before` from `count`
    bool operator==(const WindowCounts&) const = default;
  };
  WindowCounts forward_counts;
  std::vector<WindowCounts> child_counts;
  std::vector<int64_t> out_cache_loc;          // len(forward_batch.out_cache_loc)
  // Where rank r's rows start in the DP-gathered tensor of each call (a2a none under DP
  // attention; 0 otherwise): what a correct window starts at. Per call, then per DP rank.
  std::vector<std::vector<int64_t>> segment_start;
  // Per call, then per DP rank: the rows of the rank's padded batch the call carries (the
  // whole batch, or a TBO child's share).
  std::vector<std::vector<RowRange>> call_rows;
  bool operator==(const ForwardLayout&) const = default;
};

}  // namespace r3::sglang
