// The two lifecycle walks vLLM's versions are made of, each with the fixes its patches name
// (lifecycle.cpp lists the versions and the patches).
#pragma once

#include <span>

#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::vllm {

// vLLM main, the AuxOutput connector (docs/lifecycle-contract.md 2.3, "V4"): rows captured per
// request per step, full blocks published first-writer-wins under (generation, block hash),
// emitted per step from an emit cursor and cut to num_tokens - 1 (lifecycle_blocks.cpp).
struct BlockStoreFixes {
  bool key_by_kv_version = false;        // patch generation-on-weight-update
  bool reemit_after_preemption = false;  // patch preempt-reemit
  bool unbounded_store = false;          // patch store-capacity
};
LifecycleOutcome run_block_store(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                                 BlockStoreFixes fixes);

// The generation releases shipped (2.4, "V1", #28284): a host buffer keyed by KV slot, read at
// finish through the request's current block table (lifecycle_slots.cpp).
struct SlotFixes {
  bool offload_rows = false;  // patch offload-rows
  bool pd_rows = false;       // patch pd-rows
  bool from_start = false;    // rows from routed_experts_prompt_start (the fixed model)
  // The fixed model: a preempted request keeps the rows its earlier forwards wrote, for the
  // positions it has not recomputed when it ends (an abort before the recompute finished).
  bool keep_preempted_rows = false;
};
LifecycleOutcome run_slots(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                           SlotFixes fixes);

}  // namespace r3::vllm
