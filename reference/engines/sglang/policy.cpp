// Sources, paths under python/sglang/srt/: upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6,
// sglang-miles at c447264eba460045e6e961fd7cf1bfbaf038db6b.
#include "reference/engines/sglang/policy.hpp"

#include <algorithm>
#include <string>

#include "reference/engines/sglang/layout.hpp"
#include "reference/engines/sglang/validate.hpp"

namespace r3::sglang {
namespace {

namespace branch_name {
inline constexpr std::string_view local = "window_local";       // [0, len(out_cache_loc))
inline constexpr std::string_view prefix = "window_prefix";     // sum(global_num_tokens_cpu[:r])
inline constexpr std::string_view graph = "window_graph";       // r * cuda_graph_batch
inline constexpr std::string_view segment = kWriteAtOffset;  // sglang-fixed: each call at its rows' place
}  // namespace branch_name

std::string text(int64_t v) { return std::to_string(v); }

// model_runner.py, forward (upstream, near line 1544): cuda_graph_batch =
// getattr(self.decode_cuda_graph_runner, "bs", None), a request count. sglang-miles (near line
// 1378, patch "[2/27] R3 DeepEP and MTP support (#18642)"): runner.bs * runner.captured_req_width,
// a token count, or None while bs is unset. -1 stands for None.
int64_t cuda_graph_batch(const ForwardLayout& f, int r, Version version) {
  const int64_t bs = f.runner_bs[static_cast<size_t>(r)];
  if (bs <= 0) return -1;
  return version == Version::upstream ? bs : bs * f.spec_width;
}

class SglangPolicy final : public CapturePolicy {
 public:
  explicit SglangPolicy(Version version) : version_(version) {}
  Engine engine() const override { return Engine::sglang; }
  bool reads_tp_rank() const override { return false; }
  std::string_view name() const override {
    switch (version_) {
      case Version::upstream: return "sglang";
      case Version::miles: return "sglang-miles";
      case Version::fixed: return "sglang-fixed";
    }
    return "?";
  }

  Allocation allocate(const Case& c) const override {
    Allocation a;
    a.capture_rows = buffer_rows(c, version_);
    return a;  // no monolithic replay buffer in SGLang's capture
  }

  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    if (version_ == Version::fixed) return decide_fixed(call, out);
    const ForwardLayout& f = *call.sglang;
    const int r = call.dp_rank;
    const bool last = call.call_index == call.call_count - 1;
    const bool gather = f.capture == CaptureLayout::deepep_gather;
    const int64_t written = call.rows_written;
    int64_t start = 0, n = f.out_cache_loc[static_cast<size_t>(r)];
    out.branch = branch_name::local;
    // routed_experts.py, _get_local_slice: with DP attention and any a2a backend but DeepEP the
    // window is get_dp_local_slice_cpu's (layers/dp_attention.py): n = global_num_tokens_cpu[r],
    // start = r * cuda_graph_batch when can_run_graph, else sum(global_num_tokens_cpu[:r]).
    // Otherwise it is [0, len(out_cache_loc)).
    if (f.dp_attention && f.a2a != A2a::deepep) {
      n = f.global_num_tokens_cpu[static_cast<size_t>(r)];
      if (f.can_run_graph()) {
        const int64_t batch = cuda_graph_batch(f, r, version_);
        if (batch == -1) {
          if (!last) return;  // the window runs once, after the last call
          out.window = Window{0, n};
          return out.reject([&] {
            return "TypeError: unsupported operand type(s) for *: 'int' and 'NoneType' (layers/dp_attention.py, "
                   "get_dp_local_slice_cpu: dp_rank * cuda_graph_batch before any decode replay set the runner's bs)";
          });
        }
        start = r * batch;
        out.branch = branch_name::graph;
      } else {
        for (int d = 0; d < r; ++d) start += f.global_num_tokens_cpu[static_cast<size_t>(d)];
        out.branch = branch_name::prefix;
      }
    }
    out.window = Window{start, n};
    const int64_t R = call.capture_buffer.rows;
    // The slice buffer[start : start + n] stops at the buffer's end (torch slicing clamps), then
    // host_cache.buffer[out_cache_loc] = slice (state_capturer/base.py, on_forward_end) needs as
    // many rows as out_cache_loc, or one row, which broadcasts.
    const int64_t avail = std::clamp<int64_t>(R - start, 0, n);
    const int64_t slots = f.out_cache_loc[static_cast<size_t>(r)];
    if (avail != slots && avail != 1) {
      if (!last) return;
      return out.reject([&] {
        return "RuntimeError: shape mismatch: value tensor of shape [" + text(avail) + ", " +
               text(call.capture_buffer.layers) + ", " + text(call.capture_buffer.top_k) +
               "] cannot be broadcast to indexing result of shape [" + text(slots) + ", " +
               text(call.capture_buffer.layers) + ", " + text(call.capture_buffer.top_k) +
               "] (state_capturer/base.py, on_forward_end: window [" + text(start) + ", " + text(start + n) +
               ") of a " + text(R) + "-row buffer)";
      });
    }
    // The first n_r slots of out_cache_loc are the real tokens' KV slots: what a request reads back.
    const int64_t published = std::min(f.tokens[static_cast<size_t>(r)], slots);
    if (avail == 1 && slots > 1) {
      if (written > start)
        for (int64_t j = 0; j < published; ++j) out.copies.push_back({j, start, 1, gather});
      return;
    }
    const int64_t rows = std::clamp<int64_t>(written - start, 0, std::min(avail, published));
    if (rows > 0) out.copies.push_back({0, start, rows, gather});
  }

 private:
  // sglang-fixed, as r3-fixed does for vLLM: each call writes this rank's rows of that call at
  // their place in the rank's batch (a TBO child at its offset, not at row 0), read from where
  // the call's tensor holds them (the rank's segment of a DP gather, else row 0), with every
  // scattered backend's attn-TP slices gathered first, as DeepEP's capture does. The window is
  // then [0, n_r): the rank's own tokens in order.
  void decide_fixed(const CaptureCall& call, CaptureDecision& out) const {
    const ForwardLayout& f = *call.sglang;
    const size_t k = static_cast<size_t>(call.call_index), r = static_cast<size_t>(call.dp_rank);
    const bool gathered_by_dp = f.dp_attention && f.a2a == A2a::none;
    const bool gather = f.capture == CaptureLayout::deepep_gather ||
                        (f.capture == CaptureLayout::attn_tp_slice && call.tp_size > 1);
    const RowRange mine = f.call_rows[k][r];
    const int64_t src = gathered_by_dp ? f.segment_start[k][r] : 0;
    out.branch = branch_name::segment;
    out.window = Window{src, mine.size()};
    const int64_t rows = std::clamp<int64_t>(f.tokens[r] - mine.lo, 0, mine.size());
    if (rows > 0) out.copies.push_back({mine.lo, src, rows, gather});
  }

  Version version_;
};

}  // namespace

std::unique_ptr<CapturePolicy> make_policy(Version version) { return std::make_unique<SglangPolicy>(version); }

int64_t buffer_rows(const Case& c, Version version) {
  const Forward& f = *c.sglang;
  const int64_t dp = c.topology.dp;
  if (version != Version::fixed) {
    // routed_experts.py, RoutedExpertsCapturer.__init__: max(chunked_prefill_size * dp_size,
    // max_running_requests * dp_size); chunked_prefill_size is -1 with chunking off.
    return std::max(f.chunked_prefill_size * dp, f.max_running_requests * dp);
  }
  int64_t most = f.chunked_prefill_size == -1 ? f.max_prefill_tokens : f.chunked_prefill_size;
  most = std::max(most, f.max_running_requests * std::max<int64_t>(f.spec_width, 1));
  if (f.cuda_graph) {
    if (!f.cuda_graph->decode.empty()) most = std::max(most, f.cuda_graph->decode.back() * f.spec_width);
    if (!f.cuda_graph->prefill.empty()) most = std::max(most, f.cuda_graph->prefill.back());
  }
  if (counts_aligned(c)) most = ceil_align(most, c.topology.tp);
  return most * dp;
}

}  // namespace r3::sglang
