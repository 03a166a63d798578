#include "reference/engines/ascend/layout.hpp"

#include <algorithm>
#include <numeric>

#include "reference/engines/ascend/comm.hpp"
#include "reference/engines/ascend/validate.hpp"

namespace r3::ascend {
namespace {

int64_t most(const std::vector<int64_t>& n) { return n.empty() ? 0 : *std::max_element(n.begin(), n.end()); }

// Rank d's batch, `rows` long: its n_d tokens, then padding rows numbered on from n_d.
void append_batch(RowTensor& out, int d, int64_t n, int64_t rows) {
  if (std::min(n, rows) > 0) out.append({std::min(n, rows), RowKind::token, d, 0});
  if (rows > n) out.append({rows - n, RowKind::sp_padding, d, n});
}

// How the routing tensor reaches capture on every rank: tensors and receipt (spec 2.4).
void build_tensors(Call& call, Comm comm, bool sp, const std::vector<int64_t>& n, int T) {
  const int D = static_cast<int>(n.size());
  const int64_t largest = most(n);
  if (comm == Comm::allgather) {
    if (D == 1) {  // the whole local batch
      call.tensors.resize(1);
      append_batch(call.tensors[0], 0, n[0], n[0]);
      call.receipt = Receipt::per_dp;
      return;
    }
    // prepare_finalize.py, PrepareAndFinalizeWithAllGather: without SP, _prepare_with_dp_group pads
    // every batch to max and all-gathers over DP (rank d at d*max); with SP, _prepare_with_ep_group
    // all-gathers the SP shards and unpads by local_sizes (maybe_all_gather_and_maybe_unpad).
    call.tensors.resize(1);
    for (int d = 0; d < D; ++d) append_batch(call.tensors[0], d, n[d], sp ? T * ceil_div(n[d], T) : largest);
    call.receipt = Receipt::shared;
    return;
  }
  call.tensors.resize(static_cast<size_t>(D));
  for (int d = 0; d < D; ++d) {
    int64_t rows = n[d];
    if (sp) rows = T * ceil_div(n[d], T);  // upstream SP shards, tail padding
    else if (comm == Comm::alltoall) rows = std::max<int64_t>(n[d], T);  // pad_size = tp_size - num_tokens
    else rows = T * ceil_div(largest, T);  // MC2: padded_num_tokens from max_tokens_across_dp
    append_batch(call.tensors[d], d, n[d], rows);
  }
  // ALLTOALL without SP: torch.tensor_split, uneven; MC2 and every SP shard: equal slices.
  call.receipt = comm == Comm::alltoall && !sp ? Receipt::tp_split : Receipt::tp_slice;
  // Tensor d, the parts in turn, is what branch 5's TP all-gather returns: the reference reads a
  // rank's tokens from it, as vLLM's sp_shard path does.
  call.tp_gather = true;
}

}  // namespace

std::vector<int64_t> derive_counts(const Case& c) {
  std::vector<int64_t> n = derive_num_tokens_across_dp(c);
  const Fields* f = fields_of(c);
  if (c.topology.sp && f && f->runner == Runner::v1)
    for (int64_t& x : n) x = c.topology.tp * ceil_div(x, c.topology.tp);
  return n;
}

Comm comm_of(const Case& c) { return derive_comm(c, *fields_of(c), most(derive_counts(c))); }

int64_t rows_held(Comm comm, bool sp, const std::vector<int64_t>& n, int d, int t, int T) {
  const int64_t nd = n[static_cast<size_t>(d)];
  const int64_t D = static_cast<int64_t>(n.size());
  if (comm == Comm::allgather) {
    if (D == 1) return nd;
    if (!sp) return most(n) * D;
    int64_t sum = 0;
    for (int64_t x : n) sum += T * ceil_div(x, T);
    return sum;
  }
  if (sp) return ceil_div(nd, T);
  if (comm == Comm::alltoall) {
    const int64_t rows = std::max<int64_t>(nd, T);
    return rows / T + (t < rows % T ? 1 : 0);
  }
  return ceil_div(most(n), T);
}

Result<Step> derive_step(const Case& c) {
  R3_TRY_STATUS(validate(c));
  const int D = c.topology.dp, T = c.topology.tp;
  const bool sp = c.topology.sp;
  Step s;
  s.engine = engine();
  s.dp = D;
  s.tp = T;
  s.sp = sp;
  s.path = Path::single;  // the comm type says where capture sees the tensor (capture_layout_text)
  s.layer = c.layer;
  s.max_num_tokens = c.max_num_tokens;
  s.real_tokens = c.tokens;
  s.num_tokens_across_dp = derive_counts(c);
  const std::vector<int64_t>& n = s.num_tokens_across_dp;
  if (sp)
    for (int64_t x : n) s.shard_rows.push_back(ceil_div(x, T));
  const Comm comm = derive_comm(c, *fields_of(c), most(n));
  Call& call = s.calls.emplace_back();
  call.dp_size = D;
  call.tp_size = T;
  for (int d = 0; d < D; ++d) call.tokens.push_back({0, n[d]});
  if (D > 1) {  // upstream DPMetadata; local_sizes from _sequence_parallel_context (spec 2.5)
    DpMetadata& meta = call.metadata.emplace();
    meta.num_tokens_across_dp = n;
    meta.local_sizes = derive_local_sizes(n, T, sp);
    meta.index();
    call.segments = derive_segments(n, T, sp);
    call.gathered_rows = meta.gathered_rows();
    s.local_sizes = meta.local_sizes;
    s.gathered_rows = call.gathered_rows;
  }
  build_tensors(call, comm, sp, n, T);
  s.capture_rows_needed = most(n);
  s.engine_step.emplace<StepFields>({comm, sp, n});
  return s;
}

}  // namespace r3::ascend
