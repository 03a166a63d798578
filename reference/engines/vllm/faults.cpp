#include "reference/engines/vllm/faults.hpp"

#include <algorithm>
#include <numeric>

#include "reference/layout.hpp"

namespace r3::vllm {
namespace {

int64_t own_count(const CaptureCall& call) {
  return call.metadata->num_tokens_across_dp[static_cast<size_t>(call.dp_rank)];
}

// gathered_shards located at the prefix sum of the token counts, as if no rank were padded.
void unpadded_offset(const CaptureCall& call, CaptureDecision& out) {
  if (out.branch != branch::gathered_shards) return;
  const auto& across = call.metadata->num_tokens_across_dp;
  const int64_t start = std::accumulate(across.begin(), across.begin() + call.dp_rank, int64_t{0});
  for (Copy& copy : out.copies) copy.src_row = start;
}

void no_trim(const CaptureCall& call, CaptureDecision& out) {
  if (!sp_sharded_call(call) || !is_sp_branch(out)) return;
  const int T = call.tp_size;
  if (call.chunk_size == 0) {
    for (Copy& copy : out.copies) copy.rows = T * ceil_div(own_count(call), T);
    return;
  }
  // A DP chunk: every TP rank's chunk copied whole, padding included.
  const int64_t per_tp = ceil_div(own_count(call), T);
  out.copies.clear();
  for (int t = 0; t < T; ++t) out.copies.push_back({t * per_tp + call.row_offset, t * call.rows, call.rows, true});
}

void last_shard_pad(const CaptureCall& call, CaptureDecision& out) {
  if (!sp_sharded_call(call) || !is_sp_branch(out) || call.chunk_size > 0 || out.copies.empty()) return;
  const int64_t n_d = own_count(call);
  const int T = call.tp_size;
  out.copies.front().rows = std::max(n_d, (T - 1) * ceil_div(n_d, T));
}

// The whole-batch SP copy of the gathered tensor, located with TP-major group ranks: shard t
// of rank d sits after every shard of TP ranks < t and the shards (d' < d, t).
void tp_major_order(const CaptureCall& call, CaptureDecision& out) {
  if (out.branch != branch::gathered_shards || !sp_sharded_call(call) || call.chunk_size > 0) return;
  const auto& across = call.metadata->num_tokens_across_dp;
  const int T = call.tp_size;
  std::vector<int64_t> shard(across.size());
  for (size_t i = 0; i < across.size(); ++i) shard[i] = ceil_div(across[i], T);
  const int64_t per_tp_rank = std::accumulate(shard.begin(), shard.end(), int64_t{0});
  const size_t d = static_cast<size_t>(call.dp_rank);
  const int64_t before = std::accumulate(shard.begin(), shard.begin() + static_cast<std::ptrdiff_t>(d), int64_t{0});
  const int64_t n_d = across[d], s_d = shard[d];
  out.copies.clear();
  for (int t = 0; t < T; ++t) {
    const int64_t rows = std::clamp<int64_t>(n_d - t * s_d, 0, s_d);
    if (rows > 0) out.copies.push_back({call.row_offset + t * s_d, t * per_tp_rank + before, rows, false});
  }
}


void floor_sp(const CaptureCall& call, CaptureDecision& out) {
  if (!sp_sharded_call(call) || !is_sp_branch(out) || call.chunk_size > 0 || out.copies.empty()) return;
  const auto& across = call.metadata->num_tokens_across_dp;
  const int T = call.tp_size;
  Copy& copy = out.copies.front();
  copy.rows = T * (across[static_cast<size_t>(call.dp_rank)] / T);
  if (out.branch == branch::gathered_shards) {
    copy.src_row = 0;
    for (int i = 0; i < call.dp_rank; ++i) copy.src_row += T * (across[static_cast<size_t>(i)] / T);
  }
  if (copy.rows == 0) out.copies.clear();
}

}  // namespace

// Every layout fault fits vLLM's capture (its SP shards, DP chunks and monolithic replay
// buffer); it has no faults of its own.
bool has_fault(Fault f) { return f != Fault::none && static_cast<uint16_t>(f) < kFirstOwnFault; }

void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) {
  switch (f) {
    case Fault::unpadded_offset: return unpadded_offset(call, out);
    case Fault::no_trim: return no_trim(call, out);
    case Fault::last_shard_pad: return last_shard_pad(call, out);
    case Fault::off_by_one_copy:
      // One off-by-one in the engine's copy loop: every copy it makes is one row long.
      for (Copy& copy : out.copies) copy.rows += 1;
      return;
    case Fault::chunk_row0:
      // A copy that already starts before the chunk's offset (vllm-50874 writes every chunk at
      // row 0) stays at row 0.
      if (call.chunk_size > 0)
        for (Copy& copy : out.copies) copy.dst_row = std::max<int64_t>(0, copy.dst_row - call.row_offset);
      return;
    default: return;  // a fault of another layer
  }
}


void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out) {
  if (f == Fault::layer_unchecked && call.layer >= call.capture_buffer.layers) {
    CaptureCall unchecked = call;
    unchecked.capture_buffer.layers = call.layer + 1;
    return base.decide(unchecked, out);
  }
  base.decide(call, out);
  if (out.rejected) return;
  // A policy has no all-gather: the gather faults are emulated in its decisions.
  switch (f) {
    case Fault::tp_major_order: return tp_major_order(call, out);
    case Fault::floor_sp: return floor_sp(call, out);
    case Fault::skip_tp_gather:
      for (Copy& copy : out.copies) copy.from_tp_gather = false;
      return;
    default: return vllm::apply_decision_fault(f, call, out);
  }
}

}  // namespace r3::vllm
