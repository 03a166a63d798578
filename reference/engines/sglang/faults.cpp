// The faults of the mutant table (reference/fault.hpp) that SGLang's capture can have
// (docs/MUTANTS.md, "SGLang faults"): the mismatches its design invites between the layout
// capture sees and the window (../shared/spec/sglang-contract.md).
#include "reference/engines/sglang/faults.hpp"

#include <algorithm>
#include <array>

#include "reference/engines/sglang/fields.hpp"

namespace r3::sglang {
namespace {

// window-request-bucket: in a decode/verify-graph replay under DP attention (layout dp_graph)
// rank r's rows start at r * bs * w, the token bucket; upstream's window passes the request
// bucket bs as cuda_graph_batch (model_runner.py, forward; layers/dp_attention.py,
// get_dp_local_slice_cpu), so it starts at r * bs: the token offset read as a request count.
void window_request_bucket(const CaptureCall& call, CaptureDecision& out) {
  const ForwardLayout& f = *forward_of(call);
  if (f.capture != CaptureLayout::dp_graph || f.spec_width <= 1) return;
  for (Copy& copy : out.copies) copy.src_row /= f.spec_width;
  if (out.window) out.window->start /= f.spec_width;
}

// no-attn-tp-align: where a DP gather (MAX_LEN or SUM_LEN) placed rank r at an offset of the
// aligned counts a_j = ceil_align(n_j, attn_tp) (forward_batch_info.py, prepare_mlp_sync_batch),
// the faulty reader computes it from the raw counts n_j: sum(n[:r]) for SUM_LEN, r * max(n)
// for MAX_LEN. Every copy of the rank (and its window) moves by the difference.
void no_attn_tp_align(const CaptureCall& call, CaptureDecision& out) {
  const ForwardLayout& f = *forward_of(call);
  if (f.capture != CaptureLayout::dp_max_len && f.capture != CaptureLayout::dp_sum_len) return;
  const size_t r = static_cast<size_t>(call.dp_rank);
  int64_t aligned = 0, raw = 0;
  if (f.capture == CaptureLayout::dp_sum_len) {
    for (size_t j = 0; j < r; ++j) aligned += f.global_num_tokens_cpu[j], raw += f.tokens[j];
  } else {
    aligned = static_cast<int64_t>(r) * f.global_num_tokens_cpu[r];
    raw = static_cast<int64_t>(r) * *std::max_element(f.tokens.begin(), f.tokens.end());
  }
  const int64_t shift = raw - aligned;
  for (Copy& copy : out.copies) copy.src_row = std::max<int64_t>(0, copy.src_row + shift);
  if (out.window) out.window->start = std::max<int64_t>(0, out.window->start + shift);
}

// An engine's own fault is no enumerator of Fault (its id comes from its name), so these are
// tests in turn, not a switch. tp-major-order is the gather's (the pipeline's, or faulty_policy's
// emulation), so nothing here.
void apply_decision_fault_to(Fault f, const CaptureCall& call, CaptureDecision& out) {
  if (f == Fault::off_by_one_copy) {
    for (Copy& copy : out.copies) copy.rows += 1;
  } else if (f == kWindowRequestBucket) {
    window_request_bucket(call, out);
  } else if (f == kNoAttnTpAlign) {
    no_attn_tp_align(call, out);
  } else if (f == kNoAttnTpGather) {
    // call_under_fault handed capture the slice; the copies read it, not a gather.
    for (Copy& copy : out.copies) copy.from_tp_gather = false;
  } else if (f == kTboRow0) {
    // sglang-fixed writes TBO child k at its rows' place in the batch (call_rows[k][r].lo).
    if (call.call_count > 1)
      for (Copy& copy : out.copies)
        copy.dst_row -= forward_of(call)->call_rows[static_cast<size_t>(call.call_index)][static_cast<size_t>(call.dp_rank)].lo;
    for (Copy& copy : out.copies) copy.dst_row = std::max<int64_t>(0, copy.dst_row);
  }
}

// SGLang's MAX_LEN DP gather with the TP group ordered t*D + d: slice t of DP rank d lands at
// (t*D + d) * s instead of (d*T + t) * s. A copy reads the faulty tensor; as a read of the
// correct one, each of its rows p (in block b = p / s, b = t*D + d) comes from (d*T + t) * s + p % s.
void tp_major_order(const CaptureCall& call, int64_t s, CaptureDecision& out) {
  const int D = call.dp_size, T = call.tp_size;
  std::vector<Copy> reads;
  for (const Copy& copy : out.copies) {
    if (copy.from_tp_gather) {
      reads.push_back(copy);
      continue;
    }
    for (int64_t p = copy.src_row; p < copy.src_row + copy.rows;) {
      const int64_t block = p / s, end = std::min(copy.src_row + copy.rows, (block + 1) * s);
      const int64_t t = block / D, d = block % D;
      // Rows past the D*T blocks lie outside the tensor either way: read them where they are.
      const int64_t from = block < int64_t{D} * T ? (d * T + t) * s + p % s : p;
      reads.push_back({copy.dst_row + (p - copy.src_row), from, end - p, false});
      p = end;
    }
  }
  out.copies = std::move(reads);
}

constexpr std::array<FaultEntry, 4> kOwnFaults{{
    {kWindowRequestBucket, "window-request-bucket", "ordering", FaultLayer::decision,
     "a decode/verify-graph window under DP attention starts at r*bs (requests) instead of r*bs*w (tokens), "
     "upstream's cuda_graph_batch"},
    {kNoAttnTpGather, "no-attn-tp-gather", "wrong rows", FaultLayer::gather,
     "capture writes its attn-TP slice without the attn-TP all-gather (DeepEP and the scattered backends)"},
    {kNoAttnTpAlign, "no-attn-tp-align", "ordering", FaultLayer::decision,
     "a DP-gathered rank's rows looked up at offsets of the raw counts n, not of the attn_tp-aligned a"},
    {kTboRow0, "tbo-row0", "ordering", FaultLayer::decision,
     "every TBO child written at row 0 (sglang-fixed's TBO fix undone)"},
}};

}  // namespace

std::span<const FaultEntry> own_faults() { return kOwnFaults; }

bool has_fault(Fault f) {
  if (f == Fault::tp_major_order || f == Fault::off_by_one_copy) return true;
  return std::any_of(kOwnFaults.begin(), kOwnFaults.end(), [f](const FaultEntry& e) { return e.fault == f; });
}

void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) { apply_decision_fault_to(f, call, out); }

CaptureCall call_under_fault(Fault f, CaptureCall call) {
  const ForwardLayout* lay = forward_of(call);
  if (f == kNoAttnTpGather && lay && lay->capture == CaptureLayout::deepep_gather) call.rows_written = call.rows;
  return call;
}

GatherSlices tp_major_slices(Fault f, const CaptureCall& call) {
  const ForwardLayout* lay = forward_of(call);
  if (f != Fault::tp_major_order || !lay || call.tp_size < 2) return {};
  if (lay->capture != CaptureLayout::dp_max_len && lay->capture != CaptureLayout::dp_graph) return {};
  const int64_t m = lay->call_rows[static_cast<size_t>(call.call_index)].front().size();
  if (m == 0 || m % call.tp_size != 0) return {};
  return {true, m / call.tp_size};
}

void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out) {
  base.decide(sglang::call_under_fault(f, call), out);
  if (out.rejected) return;
  if (const GatherSlices g = tp_major_slices(f, call); g.reordered) return tp_major_order(call, g.slice, out);
  sglang::apply_decision_fault(f, call, out);
}

}  // namespace r3::sglang
