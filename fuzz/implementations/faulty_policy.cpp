#include "fuzz/implementations/faulty_policy.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "reference/layout.hpp"

namespace r3 {
namespace {

class FaultyPolicy final : public CapturePolicy {
 public:
  FaultyPolicy(std::unique_ptr<CapturePolicy> base, Fault fault)
      : base_(std::move(base)), fault_(fault), name_(std::string(base_->name()) + "+" + std::string(to_string(fault))) {}

  std::string_view name() const override { return name_; }

  Allocation allocate(const Case& c) const override {
    Allocation a = base_->allocate(c);
    apply_allocation_fault(fault_, c, a);
    return a;
  }

  Engine engine() const override { return base_->engine(); }

  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    if (call.sglang) return decide_sglang(call, out);
    if (fault_ == Fault::layer_unchecked && call.layer >= call.capture_buffer.layers) {
      CaptureCall unchecked = call;
      unchecked.capture_buffer.layers = call.layer + 1;
      return base_->decide(unchecked, out);
    }
    base_->decide(call, out);
    if (out.rejected) return;
    // A policy has no all-gather: the gather faults are emulated in its decisions.
    switch (fault_) {
      case Fault::tp_major_order: return tp_major_order(call, out);
      case Fault::floor_sp: return floor_sp(call, out);
      case Fault::skip_tp_gather:
        for (Copy& copy : out.copies) copy.from_tp_gather = false;
        return;
      default: return apply_decision_fault(fault_, call, out);
    }
  }

 private:
  void decide_sglang(const CaptureCall& call, CaptureDecision& out) const {
    base_->decide(call_under_fault(fault_, call), out);
    if (out.rejected) return;
    if (const SglangGatherSlices g = sglang_tp_major_slices(fault_, call); g.reordered) {
      return sglang_tp_major_order(call, g.slice, out);
    }
    apply_decision_fault(fault_, call, out);
  }

  // SGLang's MAX_LEN DP gather with the TP group ordered t*D + d: slice t of DP rank d lands at
  // (t*D + d) * s instead of (d*T + t) * s. A copy reads the faulty tensor; as a read of the
  // correct one, each of its rows p (in block b = p / s, b = t*D + d) comes from (d*T + t) * s + p % s.
  static void sglang_tp_major_order(const CaptureCall& call, int64_t s, CaptureDecision& out) {
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

  // The whole-batch SP copy of the gathered tensor, located with TP-major group ranks: shard t
  // of rank d sits after every shard of TP ranks < t and the shards (d' < d, t).
  static void tp_major_order(const CaptureCall& call, CaptureDecision& out) {
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

  static void floor_sp(const CaptureCall& call, CaptureDecision& out) {
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

  std::unique_ptr<CapturePolicy> base_;
  Fault fault_;
  std::string name_;
};

}  // namespace

std::unique_ptr<CapturePolicy> make_faulty_policy(std::unique_ptr<CapturePolicy> base, Fault fault) {
  return std::make_unique<FaultyPolicy>(std::move(base), fault);
}

}  // namespace r3
