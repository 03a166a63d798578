// Models of vLLM's routed-experts capture decision (docs/layout-contract.md section 7). They see only what
// capture() sees; the harness supplies the tensor, these choose which rows to keep.
// Source: vllm/model_executor/layers/fused_moe/routed_experts_capturer.py, capture() after PR
// #50874 (its branches, in order) and before it (the naive total assertion), and init_buffer()
// (the capture buffer [max_num_batched_tokens, L, K], the replay buffer's sizing).
#include <numeric>
#include <string>

#include "reference/layout.hpp"
#include "reference/engines/vllm/policy.hpp"

namespace r3 {
namespace {

// vLLM writes capture_buffer[0:n_d, layer]; torch raises on a layer or row count the buffer lacks.
bool check_buffer(const CaptureCall& call, int64_t rows, CaptureDecision& out) {
  if (call.layer >= call.capture_buffer.layers) {
    out.reject([&] {
      return "layer " + std::to_string(call.layer) + " out of range for a capture buffer of " +
             std::to_string(call.capture_buffer.layers) + " layers";
    });
    return false;
  }
  if (rows > call.capture_buffer.rows) {
    out.reject([&] {
      return "capture buffer holds " + std::to_string(call.capture_buffer.rows) + " rows, " + std::to_string(rows) +
             " to write";
    });
    return false;
  }
  return true;
}

void copy_rows(std::string_view branch, const CaptureCall& call, int64_t src, int64_t rows, bool tp_gather,
               CaptureDecision& out) {
  if (!check_buffer(call, rows, out)) return;
  out.branch = branch;
  out.copies.push_back({0, src, rows, tp_gather});
}

class Vllm50874 final : public CapturePolicy {
 public:
  bool reads_tp_rank() const override { return false; }
  std::string_view name() const override { return "vllm-50874"; }

  Allocation allocate(const Case& c) const override {
    Allocation a;
    a.capture_rows = c.max_num_tokens;
    if (c.monolithic) a.replay_rows = dispatch_group_replay_rows(c);
    return a;
  }

  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    const int64_t n = call.rows;
    if (call.metadata == nullptr) return copy_rows(branch::single, call, 0, n, false, out);
    const DpMetadata& meta = *call.metadata;
    const auto& across = meta.num_tokens_across_dp;
    const size_t d = static_cast<size_t>(call.dp_rank);
    if (d >= across.size()) {
      return out.reject([&] {
        return "num_tokens_across_dp has " + std::to_string(across.size()) + " entries, no entry for dp_rank " +
               std::to_string(d);
      });
    }
    const int64_t total = meta.total_tokens();
    const int64_t n_d = across[d];
    if (n == total) return copy_rows(branch::naive_total, call, meta.tokens_before(d), n_d, false, out);
    if (n == n_d) return copy_rows(branch::local, call, 0, n_d, false, out);
    const auto& sizes = meta.local_sizes;
    if (sizes && n == meta.gathered_rows()) {
      if (sizes->size() % across.size() != 0) {
        return out.reject([&] {
          return "len(local_sizes) = " + std::to_string(sizes->size()) + " is not a multiple of dp_size " +
                 std::to_string(across.size());
        });
      }
      const size_t per_rank = sizes->size() / across.size();
      return copy_rows(branch::gathered_shards, call, meta.local_sizes_before(d * per_rank), n_d, false, out);
    }
    if (call.tp_size > 1 && n != n_d && n == ceil_div(n_d, call.tp_size)) {
      return copy_rows(branch::sp_allgather, call, 0, n_d, true, out);
    }
    out.reject([&] {
      return "routed experts have " + std::to_string(n) + " rows; expected " + std::to_string(total) +
             " (all DP ranks), " + std::to_string(n_d) + " (this DP rank)" +
             (sizes ? ", " + std::to_string(meta.gathered_rows()) + " (sum of local_sizes)" : "") +
             (call.tp_size > 1 ? " or " + std::to_string(ceil_div(n_d, call.tp_size)) + " (one SP shard)" : "");
    });
  }
};

class VllmPre50874 final : public CapturePolicy {
 public:
  bool reads_tp_rank() const override { return false; }
  std::string_view name() const override { return "vllm-pre-50874"; }

  Allocation allocate(const Case& c) const override {
    Allocation a;
    a.capture_rows = c.max_num_tokens;
    if (c.monolithic) a.replay_rows = c.max_num_tokens;  // sized per rank
    return a;
  }

  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    const int64_t n = call.rows;
    if (call.metadata == nullptr) return copy_rows(branch::single, call, 0, n, false, out);
    const DpMetadata& meta = *call.metadata;
    const size_t d = static_cast<size_t>(call.dp_rank);
    const int64_t total = meta.total_tokens();
    if (d >= meta.num_tokens_across_dp.size() || n != total) {
      return out.reject([&] {
        return "assert total == n failed: routed experts have " + std::to_string(n) +
               " rows, num_tokens_across_dp sums to " + std::to_string(total);
      });
    }
    copy_rows(branch::naive_total, call, meta.tokens_before(d), meta.num_tokens_across_dp[d], false, out);
  }
};

}  // namespace

int64_t dispatch_group_replay_rows(const Case& c) {
  const int64_t group = c.topology.ep ? int64_t{c.topology.dp} * c.topology.tp : c.topology.dp;
  return c.max_num_tokens * group;
}

std::unique_ptr<CapturePolicy> make_vllm_50874_policy() { return std::make_unique<Vllm50874>(); }
std::unique_ptr<CapturePolicy> make_vllm_pre_50874_policy() { return std::make_unique<VllmPre50874>(); }

}  // namespace r3
