// Sources: SGLang upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6, paths under
// python/sglang/srt/. The rules are the same on sglang-miles (c447264eba46); the two versions
// differ only in the window (policy.cpp) and in the steps they run (profile.cpp).
#include "reference/engines/sglang/layout.hpp"
#include "reference/engines/sglang/fields.hpp"

#include <algorithm>
#include <numeric>

#include "reference/engines/sglang/validate.hpp"

namespace r3::sglang {

std::string_view to_string(CaptureLayout layout) {
  switch (layout) {
    case CaptureLayout::local_batch: return "local_batch";
    case CaptureLayout::dp_max_len: return "dp_max_len";
    case CaptureLayout::dp_sum_len: return "dp_sum_len";
    case CaptureLayout::dp_graph: return "dp_graph";
    case CaptureLayout::deepep_gather: return "deepep_gather";
    case CaptureLayout::attn_tp_slice: return "attn_tp_slice";
  }
  return "?";
}

std::string_view to_string(DpPadding padding) {
  switch (padding) {
    case DpPadding::none: return "none";
    case DpPadding::max_len: return "MAX_LEN";
    case DpPadding::sum_len: return "SUM_LEN";
  }
  return "?";
}

std::vector<int64_t> forward_tokens(const Case& c) {
  const Forward& f = *sglang::forward_of(c);
  if (f.kind == ForwardKind::extend) return c.tokens;
  std::vector<int64_t> n = f.requests;
  for (int64_t& x : n) x *= f.spec_width;
  return n;
}

int64_t ceil_align(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

int64_t decode_bucket(const std::vector<int64_t>& buckets, int64_t requests) {
  auto it = std::lower_bound(buckets.begin(), buckets.end(), requests);
  return it == buckets.end() ? -1 : *it;
}

namespace {

int64_t most(const std::vector<int64_t>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
int64_t sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

// utils/common.py, require_mlp_sync: prepare_mlp_sync_batch runs (and aligns every count to
// attn_tp) under DP attention, or when the MoE input is scattered over attn-TP ranks (an a2a
// backend with attn_tp > 1: require_gathered_buffer).
bool mlp_sync(const Forward& f, int tp) { return f.dp_attention || (f.a2a != A2a::none && tp > 1); }

// The decode/verify graph of this forward: decode_cuda_graph_runner.py, can_run and replay. With
// DP attention and a2a none (require_mlp_tp_gather) every rank replays the bucket of the largest
// batch; otherwise each rank its own. DP ranks agree on whether the graph runs (the DP sync
// all-reduces can_cuda_graph), so it runs only when the largest batch fits a bucket.
bool fill_decode_graph(const Case& c, ForwardLayout& out) {
  const Forward& f = *sglang::forward_of(c);
  if (f.kind == ForwardKind::extend || !f.cuda_graph || f.cuda_graph->decode.empty()) return false;
  const auto& buckets = f.cuda_graph->decode;
  const int64_t largest = most(f.requests);
  if (largest > buckets.back()) return false;
  const bool gather = f.dp_attention && f.a2a == A2a::none;
  for (size_t r = 0; r < f.requests.size(); ++r)
    out.runner_bs[r] = decode_bucket(buckets, gather ? largest : f.requests[r]);
  return true;
}

// forward_batch_info.py, ForwardBatch.prepare_mlp_sync_batch, and dp_attention.py,
// DpPaddingMode.get_dp_padding_mode (the hybrid-SSM idle-rank rule is not modelled: r3fuzz's
// models are not hybrid-SSM).
DpPadding padding_mode(const Forward& f, const std::vector<int64_t>& a, bool prefill_graph) {
  if (!f.dp_attention) return DpPadding::none;
  if (f.a2a == A2a::pplx || prefill_graph) return DpPadding::max_len;
  if (f.kind == ForwardKind::extend) return DpPadding::sum_len;
  return 2 * sum(a) >= static_cast<int64_t>(a.size()) * most(a) ? DpPadding::max_len : DpPadding::sum_len;
}

CaptureLayout layout_from(const Forward& f, DpPadding padding, bool decode_graph) {
  if (f.a2a == A2a::deepep) return CaptureLayout::deepep_gather;
  if (f.a2a != A2a::none) return CaptureLayout::attn_tp_slice;
  if (!f.dp_attention) return CaptureLayout::local_batch;
  if (decode_graph) return CaptureLayout::dp_graph;
  return padding == DpPadding::max_len ? CaptureLayout::dp_max_len : CaptureLayout::dp_sum_len;
}

}  // namespace

std::optional<std::vector<int64_t>> replayed_decode_buckets(const Case& c) {
  ForwardLayout out;
  out.runner_bs.assign(static_cast<size_t>(c.topology.dp), -1);
  if (!fill_decode_graph(c, out)) return std::nullopt;
  return std::move(out.runner_bs);
}

namespace {

ForwardLayout derive_forward(const Case& c) {
  const Forward& f = *sglang::forward_of(c);
  const int D = c.topology.dp, T = c.topology.tp;
  ForwardLayout out;
  out.dp_attention = f.dp_attention;
  out.a2a = f.a2a;
  out.kind = f.kind;
  out.spec_width = f.spec_width;
  out.tokens = forward_tokens(c);
  out.runner_bs.assign(static_cast<size_t>(D), f.last_decode_bucket.value_or(-1));
  out.decode_graph = fill_decode_graph(c, out);
  if (out.decode_graph) {
    // The graph pads every batch to bs*w rows; the forward batch keeps its raw counts, because
    // prepare_mlp_sync_batch does not run for a replay (decode_cuda_graph_runner.py, replay).
    out.padded.resize(static_cast<size_t>(D));
    for (int r = 0; r < D; ++r) out.padded[r] = out.runner_bs[r] * f.spec_width;
    out.global_num_tokens_cpu = out.tokens;
    out.out_cache_loc = out.tokens;
    out.padding = f.dp_attention ? DpPadding::max_len : DpPadding::none;  // segments of bs*w: [bs*w] * dp
  } else {
    std::vector<int64_t> a = out.tokens;
    if (mlp_sync(f, T))
      for (int64_t& x : a) x = ceil_align(x, T);
    // model_runner.py, _forward_raw: a breakable prefill graph runs an extend batch whose largest
    // aligned count fits the largest prefill bucket (a case lists prefill buckets only where the
    // engine captured them: profile.cpp decides where that is).
    out.prefill_graph = f.kind == ForwardKind::extend && f.cuda_graph && !f.cuda_graph->prefill.empty() &&
                        most(a) <= f.cuda_graph->prefill.back();
    out.padding = padding_mode(f, a, out.prefill_graph);
    out.global_num_tokens_cpu = out.padding == DpPadding::max_len ? std::vector<int64_t>(a.size(), most(a)) : a;
    out.padded = out.global_num_tokens_cpu;  // each batch, out_cache_loc included, padded to its entry
    out.out_cache_loc = out.padded;
  }
  out.capture = layout_from(f, out.padding, out.decode_graph);
  return out;
}

// TBO (batch_overlap/two_batch_overlap.py): the MoE layer runs once per child. Decode and verify
// split after (requests // 2) requests (compute_split_seq_index), counted here on the padded
// batch; extend splits by balanced token counts (the two-chunk split may cut a sequence),
// modelled as an even split. A split keeps attn-TP slices whole: it is rounded down to a
// multiple of attn_tp where counts are aligned to it.
int64_t tbo_split(const ForwardLayout& f, int64_t padded, int tp, bool aligned) {
  int64_t at = f.kind == ForwardKind::extend ? padded / 2 : padded / f.spec_width / 2 * f.spec_width;
  if (aligned) at = at / tp * tp;
  return at;
}

// Rows [lo, hi) of rank d's padded batch: tokens (d, lo..hi-1), padding tokens from n_d on.
void append_rows(RowTensor& out, int d, int64_t lo, int64_t hi) {
  if (hi > lo) out.append({hi - lo, RowKind::token, d, lo});
}

Call build_call(const Case& c, const ForwardLayout& f, int index, const std::vector<RowRange>& rows,
                std::vector<int64_t>& starts) {
  const int D = c.topology.dp, T = c.topology.tp;
  Call call;
  call.index = index;
  call.tokens = rows;
  call.dp_size = D;
  call.tp_size = T;
  starts.assign(static_cast<size_t>(D), 0);
  switch (f.capture) {
    case CaptureLayout::local_batch: {
      call.tensors.resize(static_cast<size_t>(D));
      for (int d = 0; d < D; ++d) {
        append_rows(call.tensors[d], d, rows[d].lo, rows[d].hi);
      }
      call.receipt = Receipt::per_dp;
      break;
    }
    case CaptureLayout::dp_max_len:
    case CaptureLayout::dp_sum_len:
    case CaptureLayout::dp_graph: {
      // _dp_gather_via_all_gather (equal segments) or _dp_gather_via_all_reduce (concatenation):
      // rank d's rows at its offset, in rank order, each the same on every TP rank.
      call.tensors.resize(1);
      int64_t offset = 0;
      for (int d = 0; d < D; ++d) {
        starts[d] = offset;
        call.segments.push_back({d, 0, d, offset, rows[d].size(), std::min(rows[d].size(), f.tokens[d]), 0});
        append_rows(call.tensors[0], d, rows[d].lo, rows[d].hi);
        offset += rows[d].size();
      }
      call.receipt = Receipt::shared;
      call.gathered_rows = offset;
      break;
    }
    case CaptureLayout::deepep_gather:
    case CaptureLayout::attn_tp_slice: {
      // layers/communicator.py, _compute_mlp_mode: the MoE input is scattered, TP rank t holding
      // rows [t*u/T, (t+1)*u/T) of its rank's batch (u is a multiple of attn_tp: aligned counts).
      // DeepEP's capturer all-gathers them over attn-TP (attn_tp_all_gather_into_tensor) first.
      // Tensor d holds the T slices in turn: TP rank t receives slice t, DeepEP's gather the whole.
      call.tensors.resize(static_cast<size_t>(D));
      for (int d = 0; d < D; ++d) {
        const int64_t slice = rows[d].size() / T;
        append_rows(call.tensors[d], d, rows[d].lo, rows[d].lo + slice * T);
      }
      call.receipt = Receipt::tp_slice;
      call.tp_gather = f.capture == CaptureLayout::deepep_gather;
      break;
    }
  }
  return call;
}

}  // namespace

CaptureLayout capture_layout_of(const Case& c) { return derive_forward(c).capture; }

void ForwardLayout::WindowCounts::index() {
  before.resize(count.size() + 1);
  before[0] = 0;
  for (size_t r = 0; r < count.size(); ++r) before[r + 1] = before[r] + count[r];
}

Result<Step> derive_step(const Case& c) {
  R3_TRY_STATUS(validate(c));
  const int D = c.topology.dp, T = c.topology.tp;
  Step s;
  s.engine = sglang::engine();
  s.dp = D;
  s.tp = T;
  s.path = Path::single;  // vLLM's path does not apply: the ForwardLayout's capture says where capture sees the tensor
  s.layer = c.layer;
  ForwardLayout f = derive_forward(c);
  s.real_tokens = f.tokens;
  // The oracle expects capture rows [0, n) of each rank to hold its n tokens in order. SGLang
  // publishes the window's rows of the real tokens (stored at their KV slots; padding goes to
  // slot 0), so n is the real count.
  s.num_tokens_across_dp = f.tokens;
  s.max_num_tokens = most(f.padded);
  const bool aligned = mlp_sync(*sglang::forward_of(c), T);
  std::vector<std::vector<RowRange>> children;
  if (sglang::forward_of(c)->tbo) {
    std::vector<RowRange> first(static_cast<size_t>(D)), second(static_cast<size_t>(D));
    for (int d = 0; d < D; ++d) {
      const int64_t at = tbo_split(f, f.padded[d], T, aligned);
      first[d] = {0, at};
      second[d] = {at, f.padded[d]};
    }
    children = {first, second};
  } else {
    std::vector<RowRange> whole(static_cast<size_t>(D));
    for (int d = 0; d < D; ++d) whole[d] = {0, f.padded[d]};
    children = {whole};
  }
  f.call_rows = children;
  f.forward_counts.count = f.global_num_tokens_cpu;
  f.forward_counts.index();
  f.child_counts.resize(children.size());
  for (size_t k = 0; k < children.size(); ++k) {
    std::vector<int64_t>& counts = f.child_counts[k].count;
    counts.resize(static_cast<size_t>(D));
    for (size_t d = 0; d < counts.size(); ++d) {
      const RowRange rows = children[k][d];
      counts[d] = f.decode_graph ? std::clamp<int64_t>(f.tokens[d] - rows.lo, 0, rows.size()) : rows.size();
    }
    f.child_counts[k].index();
  }
  f.segment_start.resize(children.size());
  for (size_t k = 0; k < children.size(); ++k)
    s.calls.push_back(build_call(c, f, static_cast<int>(k), children[k], f.segment_start[k]));
  s.gathered_rows = s.calls.front().gathered_rows;
  s.engine_step.emplace<ForwardLayout>(std::move(f));
  s.capture_rows_needed = rows_written(s);
  return s;
}

int64_t rows_written(const Step& step) {
  int64_t written = 0;
  for (const Call& call : step.calls)
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView v = call.view(r);
      written = std::max(written, v.tp_gathered >= 0 ? call.tensors[static_cast<size_t>(v.tp_gathered)].rows() : v.rows.size());
    }
  return written;
}

}  // namespace r3::sglang
