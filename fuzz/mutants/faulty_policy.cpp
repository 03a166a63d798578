#include "fuzz/mutants/faulty_policy.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "reference/layout.hpp"

namespace r3 {
namespace {

// SP is on for a call when local_sizes has one entry per (d, t) (r3-fixed's own test).
bool sp_call(const CaptureCall& call) {
  const auto* md = call.metadata;
  return md && md->local_sizes && call.tp_size > 1 &&
         md->local_sizes->size() == static_cast<size_t>(call.dp_size) * static_cast<size_t>(call.tp_size);
}

int64_t own_count(const CaptureCall& call) {
  return call.metadata->num_tokens_across_dp[static_cast<size_t>(call.dp_rank)];
}

bool is_sp_branch(const CaptureDecision& out) {
  return out.branch == branch::gathered_shards || out.branch == branch::sp_allgather;
}

class FaultyPolicy final : public CapturePolicy {
 public:
  FaultyPolicy(std::unique_ptr<CapturePolicy> base, Fault fault)
      : base_(std::move(base)), fault_(fault), name_(std::string(base_->name()) + "+" + std::string(to_string(fault))) {}

  std::string_view name() const override { return name_; }

  Allocation allocate(const Case& c) const override {
    Allocation a = base_->allocate(c);
    if (!c.monolithic) return a;
    if (fault_ == Fault::replay_per_rank) a.replay_rows = c.max_num_tokens;
    if (fault_ == Fault::replay_dp_under_ep) a.replay_rows = c.max_num_tokens * c.topology.dp;
    if (fault_ == Fault::narrow_int16) a.replay_bits = 16;
    return a;
  }

  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    if (fault_ == Fault::layer_unchecked && call.layer >= call.capture_buffer.layers) {
      CaptureCall unchecked = call;
      unchecked.capture_buffer.layers = call.layer + 1;
      return base_->decide(unchecked, out);
    }
    base_->decide(call, out);
    if (out.rejected) return;
    switch (fault_) {
      case Fault::tp_major_order: return tp_major_order(call, out);
      case Fault::unpadded_offset: return unpadded_offset(call, out);
      case Fault::no_trim: return no_trim(call, out);
      case Fault::floor_sp: return floor_sp(call, out);
      case Fault::skip_tp_gather:
        for (Copy& copy : out.copies) copy.from_tp_gather = false;
        return;
      case Fault::last_shard_pad: return last_shard_pad(call, out);
      case Fault::off_by_one_copy:
        if (!out.copies.empty()) out.copies.back().rows += 1;
        return;
      case Fault::chunk_row0:
        if (call.chunk_size > 0)
          for (Copy& copy : out.copies) copy.dst_row -= call.row_offset;
        return;
      default: return;  // allocation-only faults
    }
  }

 private:
  // The whole-batch SP copy of the gathered tensor, located with TP-major group ranks: shard t
  // of rank d sits after every shard of TP ranks < t and the shards (d' < d, t).
  static void tp_major_order(const CaptureCall& call, CaptureDecision& out) {
    if (out.branch != branch::gathered_shards || !sp_call(call) || call.chunk_size > 0) return;
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

  static void unpadded_offset(const CaptureCall& call, CaptureDecision& out) {
    if (out.branch != branch::gathered_shards || out.copies.empty()) return;
    const auto& across = call.metadata->num_tokens_across_dp;
    out.copies.front().src_row =
        std::accumulate(across.begin(), across.begin() + call.dp_rank, int64_t{0});
  }

  static void no_trim(const CaptureCall& call, CaptureDecision& out) {
    if (!sp_call(call) || !is_sp_branch(out)) return;
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

  static void floor_sp(const CaptureCall& call, CaptureDecision& out) {
    if (!sp_call(call) || !is_sp_branch(out) || call.chunk_size > 0 || out.copies.empty()) return;
    const auto& across = call.metadata->num_tokens_across_dp;
    const int T = call.tp_size;
    Copy& copy = out.copies.front();
    copy.rows = T * (own_count(call) / T);
    if (out.branch == branch::gathered_shards) {
      copy.src_row = 0;
      for (int i = 0; i < call.dp_rank; ++i) copy.src_row += T * (across[static_cast<size_t>(i)] / T);
    }
    if (copy.rows == 0) out.copies.clear();
  }

  static void last_shard_pad(const CaptureCall& call, CaptureDecision& out) {
    if (!sp_call(call) || !is_sp_branch(out) || call.chunk_size > 0 || out.copies.empty()) return;
    const int64_t n_d = own_count(call);
    const int T = call.tp_size;
    out.copies.front().rows = std::max(n_d, (T - 1) * ceil_div(n_d, T));
  }

  std::unique_ptr<CapturePolicy> base_;
  Fault fault_;
  std::string name_;
};

}  // namespace

std::unique_ptr<CapturePolicy> make_faulty_policy(std::unique_ptr<CapturePolicy> base, Fault fault) {
  return std::make_unique<FaultyPolicy>(std::move(base), fault);
}

}  // namespace r3
