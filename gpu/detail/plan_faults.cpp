// How each fault changes the pipeline's buffers and decisions (reference/fault.hpp's table).
// Allocation and decision faults are reference/fault.cpp's, the same as in the policy models.
// Gather faults live here and in plan.cpp (the gather order, tp-major-order, is laid out
// there): the pipeline has a real all-gather to get wrong, where a policy model emulates one.
#include <algorithm>
#include <string>

#include "gpu/detail/plan.hpp"
#include "reference/fault.hpp"
#include "reference/layout.hpp"
#include "reference/limits.hpp"

namespace r3::gpu::detail {
Allocation gpu_allocation(const Case& c, const CapturePolicy& policy, Fault fault) {
  Allocation a = policy.allocate(c);
  a.replay_bits = c.model.experts <= limits::kMaxExpertsInInt16 ? 16 : 32;
  apply_allocation_fault(fault, c, a);
  return a;
}

void apply_decision_fault(Fault fault, const CaptureCall& call, int64_t received_rows, CaptureDecision& decision) {
  if (decision.rejected || fault == Fault::none) return;
  // A call of an engine's own step layout: its gathers are its planner's (gpu/engines/NAME/), not the ones below.
  if (call.engine_step) return r3::apply_decision_fault(fault, call, decision);
  if (fault_layer(fault) != FaultLayer::gather) return r3::apply_decision_fault(fault, call, decision);
  const size_t d = static_cast<size_t>(call.dp_rank);
  const std::vector<int64_t> none;
  const auto& n = call.metadata ? call.metadata->num_tokens_across_dp : none;
  const int64_t n_d = d < n.size() ? n[d] : call.rows;
  const int T = call.tp_size;
  switch (fault) {
    case Fault::floor_sp:
      // The shard test expects floor(n_d / T) rows, and the gather (plan.cpp) holds floor-sized shards.
      if (decision.branch == branch::sp_allgather && call.rows != n_d / T) {
        decision.reject("routed experts have " + std::to_string(call.rows) + " rows; expected " +
                        std::to_string(n_d / T) + " (one SP shard, floor(" + std::to_string(n_d) + " / " +
                        std::to_string(T) + "))");
      } else if (decision.branch == branch::gathered_shards && sp_sharded_call(call)) {
        int64_t start = 0;
        for (size_t i = 0; i < d; ++i) start += T * (n[i] / T);
        for (Copy& c : decision.copies) c.src_row = start;
      }
      break;
    case Fault::skip_tp_gather:
      // Without the TP all-gather only the rows this rank received exist to copy.
      for (Copy& c : decision.copies) {
        if (!c.from_tp_gather) continue;
        c.from_tp_gather = false;
        c.rows = std::clamp<int64_t>(received_rows - c.src_row, 0, c.rows);
      }
      break;
    default:  // tp-major-order: the gather's order alone (plan.cpp)
      break;
  }
}

}  // namespace r3::gpu::detail
