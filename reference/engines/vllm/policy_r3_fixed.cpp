// r3-fixed: the capture decision this project proposes. It differs from vLLM's in three
// ways, each closing a finding: it writes a call's rows at the call's offset in the step
// (micro-batches and DP chunks no longer overwrite each other), it tells an SP shard from a
// whole batch by the shape of local_sizes rather than by the row count (a one-row shard on
// TP rank > 0 is no longer taken for the batch), and it sizes its buffers for the largest
// step the engine can run (CUDA-graph buckets above M, SP padding).
#include <algorithm>
#include <string>

#include "reference/layout.hpp"
#include "reference/limits.hpp"
#include "reference/engines/vllm/policy.hpp"

namespace r3 {
namespace {

std::string text(int64_t v) { return std::to_string(v); }

class R3Fixed final : public CapturePolicy {
 public:
  bool reads_tp_rank() const override { return false; }
  std::string_view name() const override { return "r3-fixed"; }

  Allocation allocate(const Case& c) const override {
    int64_t most = c.max_num_tokens;
    if (c.padding.mode == PaddingMode::cudagraph) most = std::max(most, c.padding.cudagraph_sizes.back());
    Allocation a;
    a.capture_rows = most;
    if (c.monolithic) {
      const int64_t per_rank = c.topology.sp ? c.topology.tp * ceil_div(most, c.topology.tp) : most;
      a.replay_rows = per_rank * c.topology.dp;
    }
    a.replay_bits = c.model.experts <= limits::kMaxExpertsInInt16 ? 16 : 32;
    return a;
  }

  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    check_shared(call, out);
    if (!out.rejected) decide_checked(call, out);
  }

  // Everything but the rank's own rows: the layer, the metadata's presence and its consistency.
  void check_shared(const CaptureCall& call, CaptureDecision& out) const override {
    if (call.layer < 0 || call.layer >= call.capture_buffer.layers) {
      return out.reject([&] {
        return "layer " + text(call.layer) + " outside [0, " + text(call.capture_buffer.layers) + ")";
      });
    }
    if (call.metadata == nullptr) {
      if (call.dp_size != 1) {
        return out.reject([&] { return "no DP metadata on a step with dp_size " + text(call.dp_size); });
      }
      return;
    }
    const auto& across = call.metadata->num_tokens_across_dp;
    const auto& sizes = call.metadata->local_sizes;
    const int D = call.dp_size;
    if (D == 1) return out.reject("DP metadata on a step with dp_size 1 (a single DP rank has none)");
    if (static_cast<int>(across.size()) != D) {
      return out.reject([&] {
        return "num_tokens_across_dp has " + text(static_cast<int64_t>(across.size())) +
               " entries for dp_size " + text(D);
      });
    }
    if (!sizes) return out.reject("local_sizes unset on a step with DP metadata");
    const int per_rank = shards_per_rank(call);
    if (per_rank == 0) {
      return out.reject([&] {
        return "local_sizes has " + text(static_cast<int64_t>(sizes->size())) + " entries, expected dp_size " +
               text(D) + " or dp_size*tp_size " + text(int64_t{D} * call.tp_size);
      });
    }
    for (int i = 0; i < D; ++i) {
      const int64_t want = expected_local_size(across[i], per_rank, call);
      for (int k = 0; k < per_rank; ++k) {
        const int64_t got = (*sizes)[static_cast<size_t>(i * per_rank + k)];
        if (got != want) {
          return out.reject([&] {
            return "local_sizes[" + text(i * per_rank + k) + "] = " + text(got) + " disagrees with " +
                   "num_tokens_across_dp[" + text(i) + "] = " + text(across[i]) + " (expected " +
                   text(want) + ")";
          });
        }
      }
    }
  }

  void decide_checked(const CaptureCall& call, CaptureDecision& out) const override {
    if (call.metadata == nullptr) return write(branch::single, call, {call.row_offset, 0, call.rows, false}, out);
    const bool sp = shards_per_rank(call) > 1;
    const auto& across = call.metadata->num_tokens_across_dp;
    return call.chunk_size > 0 ? decide_chunk(call, across, sp, out) : decide_batch(call, *call.metadata, sp, out);
  }

 private:
  // local_sizes holds one entry a DP rank, or one a (DP, TP) rank under SP; 0: neither.
  static int shards_per_rank(const CaptureCall& call) {
    const size_t entries = call.metadata->local_sizes->size(), D = static_cast<size_t>(call.dp_size);
    return entries == D ? 1 : entries == D * static_cast<size_t>(call.tp_size) ? call.tp_size : 0;
  }

  static int64_t expected_local_size(int64_t n, int per_rank, const CaptureCall& call) {
    const int64_t rows = ceil_div(n, per_rank);
    if (call.chunk_size == 0) return rows;
    const int64_t left = std::min(call.chunk_size, rows - call.row_offset);
    return left <= 0 ? 1 : left;
  }

  static void write(std::string_view name, const CaptureCall& call, Copy copy, CaptureDecision& out) {
    if (copy.dst_row + copy.rows > call.capture_buffer.rows) {
      return out.reject([&] {
        return "capture buffer holds " + text(call.capture_buffer.rows) + " rows, rows [" +
               text(copy.dst_row) + ", " + text(copy.dst_row + copy.rows) + ") to write";
      });
    }
    out.branch = name;
    if (copy.rows > 0) out.copies.push_back(copy);
  }

  // A whole step or one micro-batch: the call carries tokens [row_offset, row_offset + n_d).
  static void decide_batch(const CaptureCall& call, const DpMetadata& meta, bool sp, CaptureDecision& out) {
    const size_t d = static_cast<size_t>(call.dp_rank);
    const int64_t n = call.rows, n_d = meta.num_tokens_across_dp[d];
    const int64_t gathered = meta.gathered_rows();
    const size_t per_rank = sp ? static_cast<size_t>(call.tp_size) : 1;
    if (n == gathered) {
      const int64_t start = meta.local_sizes_before(d * per_rank);
      return write(branch::gathered_shards, call, {call.row_offset, start, n_d, false}, out);
    }
    if (sp && n == ceil_div(n_d, call.tp_size)) {
      return write(branch::sp_allgather, call, {call.row_offset, 0, n_d, true}, out);
    }
    if (!sp && n == n_d) return write(branch::local, call, {call.row_offset, 0, n_d, false}, out);
    out.reject([&] {
      return "routed experts have " + text(n) + " rows; expected " + text(gathered) + " (gathered) or " +
             (sp ? text(ceil_div(n_d, call.tp_size)) + " (this TP rank's SP shard)" : text(n_d) + " (this DP rank)");
    });
  }

  // DP chunk: rows [row_offset, row_offset + C) of each TP rank's rows, or a finished rank's rerun.
  static void decide_chunk(const CaptureCall& call, const std::vector<int64_t>& across, bool sp,
                           CaptureDecision& out) {
    const int64_t n_d = across[static_cast<size_t>(call.dp_rank)];
    const int64_t per_tp = sp ? ceil_div(n_d, call.tp_size) : n_d;
    const int64_t lo = call.row_offset;
    if (lo >= per_tp) {
      // A finished rank reruns its last row; a rank with no rows at all passes an empty slice.
      const int64_t rerun = per_tp > 0 ? 1 : 0;
      if (call.rows != rerun) {
        return out.reject([&] {
          return "a finished rank sends " + text(rerun) + " row" + (rerun == 1 ? "" : "s") + " (" +
                 (per_tp > 0 ? "its last row again" : "it has none") + "), got " + text(call.rows);
        });
      }
      out.branch = branch::skip;
      return;
    }
    const int64_t rows = std::min(call.chunk_size, per_tp - lo);
    if (call.rows != rows) {
      return out.reject([&] {
        return "DP chunk at row " + text(lo) + " has " + text(call.rows) + " rows, expected " + text(rows);
      });
    }
    if (!sp) return write(branch::local, call, {lo, 0, rows, false}, out);
    // The TP all-gather returns each TP rank's chunk in turn; shard t starts at padded row t*per_tp.
    out.branch = branch::sp_allgather;
    for (int t = 0; t < call.tp_size; ++t) {
      const int64_t first = t * per_tp + lo;
      const int64_t tokens = std::clamp<int64_t>(n_d - first, 0, rows);
      if (tokens > 0) write(branch::sp_allgather, call, {first, t * rows, tokens, true}, out);
      if (out.rejected) return;
    }
  }
};

}  // namespace

std::unique_ptr<CapturePolicy> make_r3_fixed_policy() { return std::make_unique<R3Fixed>(); }

}  // namespace r3
