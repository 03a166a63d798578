#include "reference/engines/ascend/policy.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/ascend/layout.hpp"
#include "reference/layout.hpp"

namespace r3::ascend {
namespace {

std::string rows_text(int64_t rows) { return std::to_string(rows) + (rows == 1 ? " row" : " rows"); }

// Part t of torch.tensor_split(rows, T): the first rows % T parts one row longer.
int64_t split_part(int64_t rows, int T, int t) { return rows / T + (t < rows % T ? 1 : 0); }

// The TP all-gather of branch 5 (capture, main 182b75ea): ALLTOALL gathers into tpd rows (T when
// tpd < T) cut by tensor_split, every other comm type into n*T rows in equal parts. An input that
// does not fit its rank's slot makes dist.all_gather fail (spec 4.2; whether HCCL raises, hangs or
// truncates is open, and each is a failure), as does a buffer shorter than the tpd rows taken.
void branch5(const CaptureCall& call, Comm comm, int64_t tpd, CaptureDecision& out) {
  const int T = call.tp_size;
  const int64_t n = call.rows;
  const int64_t buffer = comm == Comm::alltoall ? std::max<int64_t>(tpd, T) : n * T;
  const int64_t slot = comm == Comm::alltoall ? split_part(buffer, T, call.tp_rank) : n;
  if (slot != n) {
    return out.reject([&] {
      return "collective: TP rank " + std::to_string(call.tp_rank) + " sends " + rows_text(n) +
             " into an all_gather slot of " + rows_text(slot) + " (tensor_split of " + rows_text(buffer) +
             " over " + std::to_string(T) + " TP ranks)";
    });
  }
  if (buffer < tpd) {
    return out.reject([&] {
      return "the TP all-gather holds " + rows_text(buffer) + ", fewer than the " + rows_text(tpd) +
             " capture writes (a shape mismatch in device_buffer[:" + std::to_string(tpd) + "])";
    });
  }
  out.branch = branch::sp_allgather;
  if (tpd > 0) out.copies.push_back({0, 0, tpd, true});
}

class MainPolicy final : public CapturePolicy {
 public:
  std::string_view name() const override { return kPolicyMain; }
  Engine engine() const override { return ascend::engine(); }
  Allocation allocate(const Case& c) const override { return {c.max_num_tokens, std::nullopt, 16}; }

  // capture at main 182b75ea: the branches in the order the code tests them.
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    const int64_t n = call.rows;
    int64_t tpd = n;
    if (!call.metadata) {  // B1: no dp_metadata, take [0, n) and write n rows
      out.branch = branch::single;
      if (n > 0) out.copies.push_back({0, 0, n, false});
    } else {
      const DpMetadata& m = *call.metadata;
      const size_t d = static_cast<size_t>(call.dp_rank);
      tpd = m.num_tokens_across_dp[d];
      const int64_t total = m.total_tokens();
      const int64_t largest = *std::max_element(m.num_tokens_across_dp.begin(), m.num_tokens_across_dp.end());
      const int64_t twp = largest * static_cast<int64_t>(m.num_tokens_across_dp.size());
      const int T = call.tp_size;
      if (n == total) {  // B2
        out.branch = branch::naive_total;
        if (tpd > 0) out.copies.push_back({0, m.tokens_before(d + 1) - tpd, tpd, false});
      } else if (n == tpd) {  // B3
        out.branch = branch::local;
        if (tpd > 0) out.copies.push_back({0, 0, tpd, false});
      } else if (n == twp) {  // B4
        out.branch = kBranchPaddedTotal;
        if (tpd > 0) out.copies.push_back({0, call.dp_rank * largest, tpd, false});
      } else if (T > 1 && (n == ceil_div(tpd, T) || n == tpd / T || n == ceil_div(largest, T))) {  // B5
        const StepFields* sf = step_fields_of(call);
        branch5(call, sf ? sf->comm : Comm::allgather, tpd, out);
        if (out.rejected) return;
      } else {  // B6
        return out.reject([&] {
          return "AssertionError: RoutedExpertsCapturer: unexpected topk_ids batch dim " + std::to_string(n) +
                 " (expected " + std::to_string(total) + ", " + std::to_string(tpd) + ", " + std::to_string(twp) +
                 ", or " + std::to_string(ceil_div(tpd, T)) + " for dp_rank=" + std::to_string(call.dp_rank) +
                 ", tp_size=" + std::to_string(T) + ")";
        });
      }
    }
    // The layer guard returns silently where upstream raises.
    if (call.layer >= call.capture_buffer.layers) {
      out.branch = kBranchLayerGuard;
      out.copies.clear();
      return;
    }
    if (tpd > call.capture_buffer.rows) {
      return out.reject([&] {
        return "device_buffer[:" + std::to_string(tpd) + "] of a capture buffer of " + rows_text(call.capture_buffer.rows);
      });
    }
  }
};

// releases/v0.26.0rc, ops/fused_moe/fused_moe.py (AscendFusedMoE forward, after select_experts):
// the hook calls capture only when get_current_vllm_config() inside the forward returns the
// model's config with enable_return_routed_experts; at runtime it does not (vllm-ascend issue
// #16314: the output is all zeros), so no row is ever written.
class V026Policy final : public CapturePolicy {
 public:
  std::string_view name() const override { return kPolicy026; }
  Engine engine() const override { return ascend::engine(); }
  Allocation allocate(const Case& c) const override { return {c.max_num_tokens, std::nullopt, 16}; }
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    (void)call;
    out.branch = kBranchHookSkipped;
  }
  bool reads_tp_rank() const override { return false; }
};

// The proposed fix: place the rows from what the forward context says (the comm type, SP and
// the rank's own count), not from which count the tensor's length happens to equal; every TP rank
// of a group gathers whenever the comm type split the batch across TP, into equal slots under SP.
class FixedPolicy final : public CapturePolicy {
 public:
  std::string_view name() const override { return kPolicyFixed; }
  Engine engine() const override { return ascend::engine(); }
  Allocation allocate(const Case& c) const override { return {c.max_num_tokens, std::nullopt, 16}; }

  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    const StepFields* sf = step_fields_of(call);
    if (!sf) return out.reject("ascend-fixed: the step carries no Ascend forward context");
    if (call.layer >= call.capture_buffer.layers) {
      return out.reject([&] {
        return "layer " + std::to_string(call.layer) + " out of range for a capture buffer of " +
               std::to_string(call.capture_buffer.layers) + " layers";
      });
    }
    const size_t d = static_cast<size_t>(call.dp_rank);
    const int64_t tpd = sf->counts[d];
    const int T = call.tp_size;
    if (tpd > call.capture_buffer.rows) {
      return out.reject([&] { return "rank runs " + rows_text(tpd) + ", the capture buffer holds " + rows_text(call.capture_buffer.rows); });
    }
    if (sf->comm == Comm::allgather) {
      int64_t start = 0;
      if (call.metadata) {
        const std::vector<int64_t>& n = sf->counts;
        for (size_t e = 0; e < d; ++e)
          start += sf->sp ? T * ceil_div(n[e], T) : *std::max_element(n.begin(), n.end());
      }
      out.branch = call.metadata ? (sf->sp ? branch::gathered_shards : kBranchPaddedTotal) : branch::single;
      if (tpd > 0) out.copies.push_back({0, start, tpd, false});
      return;
    }
    if (T == 1) {
      out.branch = branch::local;
      if (tpd > 0) out.copies.push_back({0, 0, tpd, false});
      return;
    }
    out.branch = branch::sp_allgather;
    if (tpd > 0) out.copies.push_back({0, 0, tpd, true});
  }
};

}  // namespace

std::unique_ptr<CapturePolicy> make_policy(Version version) {
  switch (version) {
    case Version::main: return std::make_unique<MainPolicy>();
    case Version::v026: return std::make_unique<V026Policy>();
    case Version::fixed: return std::make_unique<FixedPolicy>();
  }
  return nullptr;
}

}  // namespace r3::ascend
