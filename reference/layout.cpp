#include "reference/layout.hpp"

#include <algorithm>
#include <numeric>

#include "reference/engine_model.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Rows [from, to) of rank d's padded batch: the batch is tokens (d, lo .. lo+u), padded at
// the tail with SP padding rows (numbered on from lo, like the tokens they follow).
void append_padded(RowTensor& out, int d, int64_t lo, int64_t u, int64_t from, int64_t to) {
  const int64_t token_end = std::min(to, u);
  if (from < token_end) out.append({token_end - from, RowKind::token, d, lo + from});
  const int64_t pad_begin = std::max(from, u);
  if (pad_begin < to) out.append({to - pad_begin, RowKind::sp_padding, d, lo + pad_begin});
}

// The storage of a call a step held before, cleared for a new build: a campaign derives a
// step per case, and rebuilding every call's vectors from nothing cost a dozen allocations.
Call& recycle(Call& call, int index) {
  call.index = index;
  call.tokens.clear();
  call.row_offset = 0;
  call.chunk_size = 0;
  call.segments.clear();
  call.gathered_rows = 0;
  call.kernel_rows = 0;
  call.dp_size = 1;
  call.tp_size = 1;
  call.receipt = Receipt::per_dp;
  call.tp_gather = false;
  return call;  // metadata and tensors: set by the builder, which reuses their storage
}

// The call's DP metadata, reusing the vectors of the metadata it held before.
DpMetadata& metadata_of(Call& call) {
  if (!call.metadata) call.metadata.emplace();
  if (!call.metadata->local_sizes) call.metadata->local_sizes.emplace();
  return *call.metadata;
}

// Tensors 0 .. count-1 of the call, each empty, their storage kept.
void clear_tensors(Call& call, size_t count) {
  call.tensors.resize(count);
  for (RowTensor& t : call.tensors) t.clear();
}

// A capture call where DP rank d carries tokens call.tokens[d] = [lo_d, lo_d + u_d) (a whole step
// or a micro-batch). A micro-batch runs with its own DP metadata built from its own counts
// (vllm/v1/worker/ubatch_utils.py, maybe_create_ubatch_slices; vllm/forward_context.py, DPMetadata).
void build_batch_call(const Step& s, Call& call) {
  const int D = s.dp, T = s.tp;
  const std::vector<RowRange>& batch = call.tokens;
  auto u = [&](int d) { return batch[static_cast<size_t>(d)].size(); };
  if (D > 1) {
    DpMetadata& meta = metadata_of(call);
    meta.num_tokens_across_dp.resize(batch.size());
    for (size_t d = 0; d < batch.size(); ++d) meta.num_tokens_across_dp[d] = batch[d].size();
    derive_local_sizes_into(meta.num_tokens_across_dp, T, s.sp, *meta.local_sizes);
    derive_segments_into(meta.num_tokens_across_dp, T, s.sp, call.segments);
    call.gathered_rows = std::accumulate(meta.local_sizes->begin(), meta.local_sizes->end(), int64_t{0});
  } else {
    call.metadata.reset();
  }
  auto shard = [&](int d) { return s.sp ? ceil_div(u(d), T) : u(d); };
  call.dp_size = D;
  call.tp_size = T;
  switch (s.path) {
    case Path::single:
    case Path::local: {
      clear_tensors(call, static_cast<size_t>(D));
      for (int d = 0; d < D; ++d) append_padded(call.tensors[d], d, batch[d].lo, u(d), 0, u(d));
      call.receipt = Receipt::per_dp;
      break;
    }
    case Path::gathered: {
      // Segments are DP-major, so a DP rank's T shards lie side by side: its rows are its whole
      // padded batch, appended once a DP rank rather than once a shard.
      clear_tensors(call, 1);
      call.tensors[0].reserve(2 * static_cast<size_t>(D));  // tokens and SP padding per DP rank, at most
      for (int d = 0; d < D && D > 1; ++d) {  // one DP rank gathers nothing (no segments)
        const int64_t rows = s.sp ? T * shard(d) : u(d);
        append_padded(call.tensors[0], d, batch[d].lo, u(d), 0, rows);
      }
      call.receipt = Receipt::shared;
      break;
    }
    case Path::sp_shard: {
      // Tensor d is the DP rank's padded batch, T shards of s_d rows: shard t is TP rank t's,
      // and the whole is what the TP all-gather of the shards returns.
      clear_tensors(call, static_cast<size_t>(D));
      for (int d = 0; d < D; ++d) append_padded(call.tensors[d], d, batch[d].lo, u(d), 0, T * shard(d));
      call.receipt = Receipt::tp_slice;
      call.tp_gather = true;
      break;
    }
  }
  call.kernel_rows = s.path == Path::single ? u(0) : s.path == Path::gathered ? call.gathered_rows : 0;
}

// docs/layout-contract.md 9.2: chunk c of a DP-chunked step (paths local and sp_shard), as
// vllm/model_executor/layers/fused_moe/layer.py, forward_impl_chunked, ran it before PR #39107:
// all ranks in lockstep, local_sizes from DPMetadata.chunked_sizes (a finished rank's entry 1).
void build_chunk_call(const Step& s, Call& call, int c, int64_t C) {
  const int D = s.dp, T = s.tp;
  const int S = s.sp ? T : 1;
  call.row_offset = c * C;
  call.chunk_size = C;
  DpMetadata& meta = metadata_of(call);
  std::vector<int64_t>& local_sizes = *meta.local_sizes;
  local_sizes.clear();
  for (int d = 0; d < D; ++d) {
    const int64_t rows = std::min(C, ceil_div(s.num_tokens_across_dp[d], S) - c * C);
    for (int k = 0; k < S; ++k) local_sizes.push_back(rows <= 0 ? 1 : rows);
  }
  meta.num_tokens_across_dp = s.num_tokens_across_dp;
  call.gathered_rows = std::accumulate(local_sizes.begin(), local_sizes.end(), int64_t{0});
  const bool shard_path = s.path == Path::sp_shard;
  // Tensor d: the DP rank's chunk, or with SP its T TP ranks' chunks in turn (each the same
  // length), which is what the TP all-gather returns.
  clear_tensors(call, static_cast<size_t>(D));
  call.dp_size = D;
  call.tp_size = T;
  call.receipt = shard_path ? Receipt::tp_slice : Receipt::per_dp;
  call.tp_gather = shard_path;
  for (int d = 0; d < D; ++d) {
    const int64_t n = s.num_tokens_across_dp[d];
    const int64_t N = shard_path ? ceil_div(n, T) : n;  // rows per (d, t) before chunking
    const int64_t lo = c * C, hi = std::min(lo + C, N);
    call.tokens.push_back(lo < N ? RowRange{lo, hi} : RowRange{lo, lo});
    // Rows [a, b) of the rank's per-TP-rank rows, or the rerun of its last row once finished.
    auto append_chunk = [&](RowTensor& out, int64_t base) {
      // forward_impl_chunked clamps the slice to [N-1, N); with N = 0 that is x[-1:0] of an
      // empty tensor, which is empty: the rank passes 0 rows (its local_sizes entry stays 1).
      if (lo < N) append_padded(out, d, 0, n, base + lo, base + hi);
      else if (N > 0) append_padded(out, d, 0, n, base + N - 1, base + N);
    };
    if (!shard_path) {
      append_chunk(call.tensors[d], 0);
      continue;
    }
    for (int t = 0; t < T; ++t) append_chunk(call.tensors[d], t * N);
  }
}

// The step's calls, built over the calls it held before (their storage reused).
void build_calls(const Case& c, Step& s) {
  const int D = s.dp;
  if (c.dp_chunk) {
    const int64_t C = *c.dp_chunk;
    const int64_t chunks = ceil_div(most_rows_to_chunk(s.num_tokens_across_dp, s.tp, s.sp), C);
    s.calls.resize(static_cast<size_t>(chunks));
    for (int64_t k = 0; k < chunks; ++k) build_chunk_call(s, recycle(s.calls[k], static_cast<int>(k)), static_cast<int>(k), C);
    return;
  }
  if (c.microbatches > 1) {
    const int U = c.microbatches;
    const int64_t P = s.num_tokens_across_dp[0];  // dp_max: every rank runs P
    const int64_t q = P / U;
    s.calls.resize(static_cast<size_t>(U));
    for (int i = 0; i < U; ++i) {
      const int64_t lo = i * q, hi = i == U - 1 ? P : lo + q;
      Call& call = recycle(s.calls[i], i);
      call.tokens.assign(static_cast<size_t>(D), RowRange{lo, hi});
      call.row_offset = lo;
      build_batch_call(s, call);
    }
    return;
  }
  s.calls.resize(1);
  Call& call = recycle(s.calls[0], 0);
  call.tokens.resize(static_cast<size_t>(D));
  for (int d = 0; d < D; ++d) call.tokens[d] = {0, s.num_tokens_across_dp[d]};
  build_batch_call(s, call);
}

// Applies a metadata override to the single call and records why the reference rejects it.
void apply_override(const MetadataOverride& o, Step& s) {
  Call& call = s.calls.front();
  DpMetadata given;
  if (call.metadata) given = *call.metadata;
  else given.num_tokens_across_dp = s.num_tokens_across_dp;
  if (o.num_tokens_across_dp) given.num_tokens_across_dp = *o.num_tokens_across_dp;
  if (o.local_sizes_given) given.local_sizes = o.local_sizes;
  auto reject = [&](std::string why) {
    if (!s.rejection) s.rejection = std::move(why);
  };
  if (!call.metadata) {
    reject("metadata: a single-rank step (dp 1) has no DP metadata, yet the override gives some");
  } else {
    const auto& want_n = call.metadata->num_tokens_across_dp;
    const auto& got_n = given.num_tokens_across_dp;
    if (got_n.size() != want_n.size()) {
      reject("metadata.num_tokens_across_dp: has " + std::to_string(got_n.size()) + " entries for dp " +
             std::to_string(s.dp));
    } else {
      for (size_t d = 0; d < got_n.size(); ++d)
        if (got_n[d] != want_n[d])
          reject("metadata.num_tokens_across_dp[" + std::to_string(d) + "] = " + std::to_string(got_n[d]) +
                 ", but rank " + std::to_string(d) + " runs " + std::to_string(want_n[d]) + " rows");
    }
    const auto& want_l = *call.metadata->local_sizes;
    if (!given.local_sizes) {
      reject("metadata.local_sizes: unset on a step with DP metadata (the layout gives " + list_text(want_l) + ")");
    } else if (given.local_sizes->size() != want_l.size()) {
      reject("metadata.local_sizes: has " + std::to_string(given.local_sizes->size()) + " entries, the layout has " +
             std::to_string(want_l.size()) + (s.sp ? " (dp*tp with sp)" : " (dp without sp)"));
    } else {
      for (size_t i = 0; i < want_l.size(); ++i)
        if ((*given.local_sizes)[i] != want_l[i])
          reject("metadata.local_sizes[" + std::to_string(i) + "] = " + std::to_string((*given.local_sizes)[i]) +
                 ", the layout gives " + std::to_string(want_l[i]));
    }
  }
  call.metadata = std::move(given);
}

}  // namespace

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

const RowTensor& Call::rows_of(const RankView& v, RowTensor& scratch) const {
  const RowTensor& whole = tensors[static_cast<size_t>(v.received)];
  if (v.rows.lo == 0 && v.rows.hi == whole.rows()) return whole;
  scratch.clear();
  scratch.append_slice(whole, v.rows);
  return scratch;
}

RowTensor Call::input_of(const RankView& v) const {
  RowTensor slice;
  return rows_of(v, slice);
}

namespace {

void fill_prefix(const std::vector<int64_t>& values, std::vector<int64_t>& prefix) {
  prefix.resize(values.size() + 1);
  prefix[0] = 0;
  for (size_t i = 0; i < values.size(); ++i) prefix[i + 1] = prefix[i] + values[i];
}

// The indexed sum when the index matches the values, else a plain sum.
int64_t sum_before(const std::vector<int64_t>& values, const std::vector<int64_t>& prefix, size_t end) {
  if (prefix.size() == values.size() + 1) return prefix[end];
  return std::accumulate(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(end), int64_t{0});
}

}  // namespace

void DpMetadata::index() {
  fill_prefix(num_tokens_across_dp, token_prefix);
  if (local_sizes) fill_prefix(*local_sizes, local_prefix);
  else local_prefix.clear();
}

int64_t DpMetadata::tokens_before(size_t dp) const { return sum_before(num_tokens_across_dp, token_prefix, dp); }

int64_t DpMetadata::local_sizes_before(size_t i) const {
  return local_sizes ? sum_before(*local_sizes, local_prefix, i) : 0;
}

std::vector<int64_t> derive_num_tokens_across_dp(const Case& c) {
  std::vector<int64_t> n;
  derive_num_tokens_across_dp_into(c, n);
  return n;
}

void derive_num_tokens_across_dp_into(const Case& c, std::vector<int64_t>& n) {
  n.assign(c.tokens.begin(), c.tokens.end());
  // An idle rank's dummy token (section 1) is counted before any padding: it enters the DP
  // coordination like a real count (vllm/v1/worker/gpu_worker.py, execute_dummy_batch).
  if (c.idle_dummy)
    for (int64_t& count : n) count = std::max<int64_t>(count, 1);
  const int64_t most = n.empty() ? 0 : *std::max_element(n.begin(), n.end());
  switch (c.padding.mode) {
    case PaddingMode::none:
      break;
    case PaddingMode::dp_max:  // vllm/v1/worker/dp_utils.py, _post_process_dp_padding: every rank runs the max
      std::fill(n.begin(), n.end(), most);
      break;
    case PaddingMode::cudagraph: {  // the smallest capture size >= the DP max (CudagraphDispatcher)
      const auto& sizes = c.padding.cudagraph_sizes;
      auto bucket = std::lower_bound(sizes.begin(), sizes.end(), most);
      if (bucket != sizes.end()) std::fill(n.begin(), n.end(), *bucket);  // else eager: no padding
      break;
    }
  }
}

// vllm/forward_context.py, DPMetadata.sp_local_sizes: with SP each DP rank's count becomes T
// entries of ceil(n_d / T), DP-major; without SP the counts themselves.
std::vector<int64_t> derive_local_sizes(const std::vector<int64_t>& n, int tp, bool sp) {
  std::vector<int64_t> sizes;
  derive_local_sizes_into(n, tp, sp, sizes);
  return sizes;
}

void derive_local_sizes_into(const std::vector<int64_t>& n, int tp, bool sp, std::vector<int64_t>& sizes) {
  if (!sp) {
    sizes.assign(n.begin(), n.end());
    return;
  }
  sizes.clear();
  for (int64_t count : n) sizes.insert(sizes.end(), static_cast<size_t>(tp), ceil_div(count, tp));
}

// all_gatherv concatenates group ranks in rank order (vllm/distributed/device_communicators/
// pynccl.py, PyNcclCommunicator.all_gatherv); the EP group is DP-major, rank d*T + t
// (fused_moe/config.py, FusedMoEParallelConfig.flatten_tp_across_dp_and_pcp).
std::vector<Segment> derive_segments(const std::vector<int64_t>& n, int tp, bool sp) {
  std::vector<Segment> segments;
  derive_segments_into(n, tp, sp, segments);
  return segments;
}

void derive_segments_into(const std::vector<int64_t>& n, int tp, bool sp, std::vector<Segment>& segments) {
  segments.clear();
  segments.reserve(sp ? n.size() * static_cast<size_t>(tp) : n.size());
  int64_t offset = 0;
  for (size_t d = 0; d < n.size(); ++d) {
    const int di = static_cast<int>(d);
    if (!sp) {
      segments.push_back({di, 0, di, offset, n[d], n[d], 0});
      offset += n[d];
      continue;
    }
    const int64_t s = ceil_div(n[d], tp);
    for (int t = 0; t < tp; ++t) {
      const int64_t tokens = std::clamp<int64_t>(n[d] - t * s, 0, s);
      segments.push_back({di, t, di * tp + t, offset, s, tokens, s - tokens});
      offset += s;
    }
  }
}

int64_t most_rows_to_chunk(const std::vector<int64_t>& n, int tp, bool sp) {
  int64_t most = 0;
  for (int64_t count : n) most = std::max(most, sp ? ceil_div(count, tp) : count);
  return most;
}

int64_t most_rows_to_chunk(const Case& c) {
  return most_rows_to_chunk(derive_num_tokens_across_dp(c), c.topology.tp, c.topology.sp);
}

Result<Step> derive_step(const Case& c) {
  Step s;
  R3_TRY_STATUS(derive_step_into(s, c));
  return s;
}

Status derive_step_into(Step& s, const Case& c) { return c.engine.model().derive_step_into(s, c); }

Status derive_base_step_into(Step& s, const Case& c) {
  R3_TRY_STATUS(validate(c));
  s.engine = c.engine;
  s.dp = c.topology.dp;
  s.tp = c.topology.tp;
  s.sp = c.topology.sp;
  s.path = c.path;
  s.layer = c.layer;
  s.max_num_tokens = c.max_num_tokens;
  s.real_tokens.assign(c.tokens.begin(), c.tokens.end());
  derive_num_tokens_across_dp_into(c, s.num_tokens_across_dp);
  s.shard_rows.clear();
  if (s.sp)
    for (int64_t n : s.num_tokens_across_dp) s.shard_rows.push_back(ceil_div(n, s.tp));
  s.gathered_rows = 0;
  if (s.dp > 1) {
    if (!s.local_sizes) s.local_sizes.emplace();
    derive_local_sizes_into(s.num_tokens_across_dp, s.tp, s.sp, *s.local_sizes);
    s.gathered_rows = std::accumulate(s.local_sizes->begin(), s.local_sizes->end(), int64_t{0});
  } else {
    s.local_sizes.reset();
  }
  s.capture_rows_needed = *std::max_element(s.num_tokens_across_dp.begin(), s.num_tokens_across_dp.end());
  build_calls(c, s);
  s.replay_rows_needed.reset();
  if (c.monolithic) {
    int64_t most = 0;
    for (const Call& call : s.calls) most = std::max(most, call.kernel_rows);
    s.replay_rows_needed = most;
  }
  s.rejection.reset();
  s.engine_step.reset();
  if (c.metadata) apply_override(*c.metadata, s);
  for (Call& call : s.calls)
    if (call.metadata) call.metadata->index();
  return ok_status();
}

}  // namespace r3
