// How each fault changes the pipeline's buffers and decisions (design.md's mutant table).
// The gather-order fault (tp-major-order) lives in plan.cpp, where the gather is laid out.
#include <algorithm>
#include <numeric>
#include <string>

#include "gpu/detail/plan.hpp"
#include "reference/layout.hpp"
#include "reference/limits.hpp"

namespace r3::gpu::detail {
namespace {

int64_t prefix(const std::vector<int64_t>& v, size_t end) {
  return std::accumulate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(end, v.size())), int64_t{0});
}

// local_sizes has one entry per EP rank: the gathered tensor is SP-sharded.
bool sp_layout(const CaptureCall& call) {
  return call.metadata && call.metadata->local_sizes && call.tp_size > 1 &&
         call.metadata->local_sizes->size() == static_cast<size_t>(call.dp_size) * call.tp_size;
}

bool sp_copy(const CaptureDecision& d, const CaptureCall& call) {
  return sp_layout(call) && d.copies.size() == 1 &&
         (d.branch == branch::gathered_shards || d.branch == branch::sp_allgather);
}

}  // namespace

Allocation gpu_allocation(const Case& c, const CapturePolicy& policy, Fault fault) {
  Allocation a = policy.allocate(c);
  if (c.monolithic) {
    if (fault == Fault::replay_per_rank) a.replay_rows = c.max_num_tokens;
    if (fault == Fault::replay_dp_under_ep) a.replay_rows = c.max_num_tokens * c.topology.dp;
  }
  a.replay_bits = fault == Fault::narrow_int16 || c.model.experts <= limits::kMaxExpertsInInt16 ? 16 : 32;
  return a;
}

void apply_decision_fault(Fault fault, const CaptureCall& call, int64_t received_rows, CaptureDecision& decision) {
  if (decision.rejected || fault == Fault::none) return;
  const size_t d = static_cast<size_t>(call.dp_rank);
  const std::vector<int64_t> none;
  const auto& n = call.metadata ? call.metadata->num_tokens_across_dp : none;
  const int64_t n_d = d < n.size() ? n[d] : call.rows;
  const int T = call.tp_size;
  switch (fault) {
    case Fault::unpadded_offset:
      if (decision.branch == branch::gathered_shards)
        for (Copy& c : decision.copies) c.src_row = prefix(n, d);
      break;
    case Fault::floor_sp:
      if (decision.branch == branch::sp_allgather && call.rows != n_d / T) {
        decision.reject("routed experts have " + std::to_string(call.rows) + " rows; expected " +
                        std::to_string(n_d / T) + " (one SP shard, floor(" + std::to_string(n_d) + " / " +
                        std::to_string(T) + "))");
      } else if (decision.branch == branch::gathered_shards && sp_layout(call)) {
        int64_t start = 0;
        for (size_t i = 0; i < d; ++i) start += T * (n[i] / T);
        for (Copy& c : decision.copies) c.src_row = start;
      }
      break;
    case Fault::no_trim:
      if (sp_copy(decision, call)) decision.copies[0].rows = T * ceil_div(n_d, T);
      break;
    case Fault::skip_tp_gather:
      for (Copy& c : decision.copies) {
        if (!c.from_tp_gather) continue;
        c.from_tp_gather = false;
        c.rows = std::clamp<int64_t>(received_rows - c.src_row, 0, c.rows);
      }
      break;
    case Fault::last_shard_pad:
      // Shards 0..T-2 are taken as full (s rows of tokens), only the last as short.
      if (sp_copy(decision, call) && decision.copies[0].rows == n_d) {
        const Copy whole = decision.copies[0];
        const int64_t s = ceil_div(n_d, T);
        decision.copies.clear();
        for (int t = 0; t < T; ++t) {
          const int64_t rows = t < T - 1 ? s : std::max<int64_t>(0, n_d - (T - 1) * s);
          decision.copies.push_back({whole.dst_row + t * s, whole.src_row + t * s, rows, whole.from_tp_gather});
        }
      }
      break;
    case Fault::off_by_one_copy:
      for (Copy& c : decision.copies) c.rows += 1;
      break;
    case Fault::chunk_row0:
      if (call.chunk_size > 0)
        for (Copy& c : decision.copies) c.dst_row = std::max<int64_t>(0, c.dst_row - call.row_offset);
      break;
    default:  // buffer and gather faults: no change of the decision
      break;
  }
}

}  // namespace r3::gpu::detail
