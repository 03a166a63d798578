// Sources, paths under python/sglang/srt/: upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6,
// sglang-miles at c447264eba460045e6e961fd7cf1bfbaf038db6b.
#include "reference/engines/sglang/policy.hpp"
#include "reference/engines/sglang/fields.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "reference/engines/sglang/layout.hpp"
#include "reference/engines/sglang/validate.hpp"

namespace r3::sglang {
namespace {

namespace branch_name {
inline constexpr std::string_view local = "window_local";    // [0, len(out_cache_loc))
inline constexpr std::string_view prefix = "window_prefix";  // sum(global_num_tokens_cpu[:r])
inline constexpr std::string_view graph = "window_graph";    // r * cuda_graph_batch
}  // namespace branch_name

struct PatchInfo {
  Patch patch;
  std::string_view name;
  std::string_view description;
};

constexpr std::array<PatchInfo, kPatchCount> kPatches = {{
    {Patch::window_token_bucket, "window-token-bucket",
     "model_runner.py passes cuda_graph_batch = bs * captured_req_width (tokens), not bs (requests)"},
    {Patch::prefill_graph_window, "prefill-graph-window",
     "get_dp_local_slice_cpu takes r * cuda_graph_batch only for a decode/verify graph replay; a prefill "
     "graph's window comes from the prefix sums of global_num_tokens_cpu"},
    {Patch::gather_scattered, "gather-scattered",
     "RoutedExpertsCapturer.capture all-gathers the attn-TP slices for every scattered a2a backend, as for "
     "DeepEP, and _get_local_slice then reads [0, len(out_cache_loc))"},
    {Patch::tbo_offsets, "tbo-offsets",
     "under TBO each child's capture writes at its rows' offset, and its window comes from its own counts"},
    {Patch::buffer_rows, "buffer-rows",
     "RoutedExpertsCapturer.__init__ sizes the buffer for every tensor: max_running_requests * w, counts "
     "aligned to attn_tp, the prefill size when chunking is off"},
}};

std::string text(int64_t v) { return std::to_string(v); }

bool has(const Patches& p, Patch patch) { return p.test(static_cast<size_t>(patch)); }

// model_runner.py, forward (upstream, near line 1544): cuda_graph_batch =
// getattr(self.decode_cuda_graph_runner, "bs", None), a request count. sglang-miles (near line
// 1378, patch "[2/27] R3 DeepEP and MTP support (#18642)"): runner.bs * runner.captured_req_width,
// a token count, or None while bs is unset. -1 stands for None.
int64_t cuda_graph_batch(int64_t bs, int64_t w, const Patches& p) {
  if (bs <= 0) return -1;
  return has(p, Patch::window_token_bucket) ? bs * w : bs;
}

class SglangPolicy final : public CapturePolicy {
 public:
  SglangPolicy(std::string_view name, Patches patches) : name_(name), patches_(patches) {}
  Engine engine() const override { return sglang::engine(); }
  bool reads_tp_rank() const override { return false; }
  std::string_view name() const override { return name_; }

  Allocation allocate(const Case& c) const override {
    Allocation a;
    a.capture_rows = buffer_rows(c, patches_);
    return a;  // no monolithic replay buffer in SGLang's capture
  }

  std::vector<std::string_view> patch_names() const override {
    std::vector<std::string_view> names;
    for (const PatchInfo& p : kPatches)
      if (!has(patches_, p.patch)) names.push_back(p.name);
    return names;
  }

  std::unique_ptr<CapturePolicy> with_patches(std::span<const std::string_view> names) const override {
    Patches more = patches_;
    for (std::string_view name : names) {
      auto it = std::find_if(kPatches.begin(), kPatches.end(), [&](const PatchInfo& p) { return p.name == name; });
      if (it == kPatches.end()) return nullptr;
      more.set(static_cast<size_t>(it->patch));
    }
    return std::make_unique<SglangPolicy>(name_, more);
  }

  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    const ForwardLayout& f = *sglang::forward_of(call);
    const size_t k = static_cast<size_t>(call.call_index), r = static_cast<size_t>(call.dp_rank);
    const bool last = call.call_index == call.call_count - 1;
    const bool scattered = f.capture == CaptureLayout::attn_tp_slice && call.tp_size > 1;
    const bool gather = f.capture == CaptureLayout::deepep_gather || (scattered && has(patches_, Patch::gather_scattered));
    const int64_t written = scattered && gather ? call.rows * call.tp_size : call.rows_written;
    // Without tbo-offsets every call writes at row 0 and one window, from the forward's counts,
    // runs after the last (an earlier call's rows reach it where the last did not write over them); with it, each call is written at its rows' offset in the rank's
    // batch and read through its own window (each TBO child has its own forward batch).
    const bool per_call = has(patches_, Patch::tbo_offsets) && call.call_count > 1;
    const RowRange mine = per_call ? f.call_rows[k][r] : RowRange{0, f.padded[r]};
    const int64_t real = std::clamp<int64_t>(f.tokens[r] - mine.lo, 0, mine.size());
    const int64_t slots = per_call ? (f.decode_graph ? real : mine.size()) : f.out_cache_loc[r];
    // base.py, BaseDeviceCache.capture: buffer[:batch, layer_id, :] = topk_ids. With more rows than
    // the buffer, the slice stops at R and torch refuses the assignment (capacity: conclude()
    // reports it first).
    if (written > call.capture_buffer.rows) {
      return out.reject([&] {
        return "RuntimeError: The expanded size of the tensor (" + text(call.capture_buffer.rows) +
               ") must match the existing size (" + text(written) +
               ") at non-singleton dimension 0 (state_capturer/base.py, BaseDeviceCache.capture)";
      });
    }
    int64_t start = 0, n = slots;
    out.branch = branch_name::local;
    // routed_experts.py, _get_local_slice: with DP attention and any a2a backend but DeepEP the
    // window is get_dp_local_slice_cpu's (layers/dp_attention.py): n = global_num_tokens_cpu[r],
    // start = r * cuda_graph_batch when can_run_graph, else sum(global_num_tokens_cpu[:r]).
    // Otherwise it is [0, len(out_cache_loc)). gather-scattered makes every scattered backend
    // DeepEP-like.
    const bool deepep_like = f.capture == CaptureLayout::deepep_gather ||
                             (f.capture == CaptureLayout::attn_tp_slice && has(patches_, Patch::gather_scattered));
    const bool dp_window = f.dp_attention && !deepep_like;
    if (dp_window) {
      // What global_num_tokens_cpu holds for the window: the forward's, or with tbo-offsets the call's own.
      const ForwardLayout::WindowCounts& counts = per_call ? f.child_counts[k] : f.forward_counts;
      n = counts.count[r];
      const bool graph = has(patches_, Patch::prefill_graph_window) ? f.decode_graph : f.can_run_graph();
      if (graph) {
        const int64_t bs = f.runner_bs[r] > 0 && per_call ? f.runner_bs[r] / static_cast<int64_t>(call.call_count)
                                                          : f.runner_bs[r];
        const int64_t batch = cuda_graph_batch(bs, f.spec_width, patches_);
        if (batch == -1) {
          if (!last) return;
          out.window = Window{0, n, per_call};
          return out.reject([&] {
            return "TypeError: unsupported operand type(s) for *: 'int' and 'NoneType' (layers/dp_attention.py, "
                   "get_dp_local_slice_cpu: dp_rank * cuda_graph_batch before any decode replay set the runner's bs)";
          });
        }
        start = static_cast<int64_t>(r) * batch;
        out.branch = branch_name::graph;
      } else {
        start = counts.before[r];
        out.branch = branch_name::prefix;
      }
    }
    out.window = Window{start, n, per_call};
    const int64_t R = call.capture_buffer.rows;
    // The slice buffer[start : start + n] stops at the buffer's end (torch slicing clamps), then
    // host_cache.buffer[out_cache_loc] = slice (state_capturer/base.py, on_forward_end) needs as
    // many rows as out_cache_loc, or one row, which broadcasts.
    const int64_t avail = std::clamp<int64_t>(R - start, 0, n);
    if (avail != slots && avail != 1) {
      if (!per_call && !last) return;
      return out.reject([&] {
        return "RuntimeError: shape mismatch: value tensor of shape [" + text(avail) + ", " +
               text(call.capture_buffer.layers) + ", " + text(call.capture_buffer.top_k) +
               "] cannot be broadcast to indexing result of shape [" + text(slots) + ", " +
               text(call.capture_buffer.layers) + ", " + text(call.capture_buffer.top_k) +
               "] (state_capturer/base.py, on_forward_end: window [" + text(start) + ", " + text(start + n) +
               ") of a " + text(R) + "-row buffer)";
      });
    }
    // The first slots of out_cache_loc are the real tokens' KV slots: what a request reads back.
    const int64_t published = std::min(real, slots);
    if (avail == 1 && slots > 1) {
      // Every slot gets the same row. The published rows are the host cache's, not the device
      // buffer's: those past R are left unwritten here (a wrong row all the same), not an overflow.
      if (written > start)
        for (int64_t j = 0; j < published && mine.lo + j < R; ++j) out.copies.push_back({mine.lo + j, start, 1, gather});
      return;
    }
    const int64_t rows = std::clamp<int64_t>(written - start, 0, std::min(avail, published));
    if (rows > 0) out.copies.push_back({mine.lo, start, rows, gather});
  }

 private:
  std::string_view name_;
  Patches patches_;
};

}  // namespace

std::string_view to_string(Patch patch) { return kPatches[static_cast<size_t>(patch)].name; }
std::string_view describe(Patch patch) { return kPatches[static_cast<size_t>(patch)].description; }

std::span<const Patch> all_patches() {
  static constexpr std::array<Patch, kPatchCount> kAll = {Patch::window_token_bucket, Patch::prefill_graph_window,
                                                          Patch::gather_scattered, Patch::tbo_offsets,
                                                          Patch::buffer_rows};
  return kAll;
}

Patches patches_of(Version version) {
  switch (version) {
    case Version::upstream: return {};
    case Version::miles: return Patches{}.set(static_cast<size_t>(Patch::window_token_bucket));
    case Version::fixed: return Patches{}.set();
  }
  return {};
}

std::unique_ptr<CapturePolicy> make_policy(Version version) {
  const std::string_view names[] = {"sglang", "sglang-miles", "sglang-fixed"};
  return std::make_unique<SglangPolicy>(names[static_cast<int>(version)], patches_of(version));
}

int64_t buffer_rows(const Case& c, Version version) { return buffer_rows(c, patches_of(version)); }

int64_t buffer_rows(const Case& c, const Patches& patches) {
  const Forward& f = *sglang::forward_of(c);
  const int64_t dp = c.topology.dp;
  if (!has(patches, Patch::buffer_rows)) {
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
