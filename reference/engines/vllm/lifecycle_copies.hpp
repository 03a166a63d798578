// vLLM's copy to host (docs/lifecycle-contract.md 2.3, "Copy to host"; the spec's section 5): which
// completion orders its streams and events allow (the CopyWindow check_profile enforces and the
// trace draw draws within), and why no order inside that window changes what the lifecycle reads.
#pragma once

#include "reference/case.hpp"
#include "reference/trace/copies.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::vllm {

// Profile vllm (main, the AuxOutput connector) with async scheduling (config.overlap): a step's copy
// may land after the next forward, before the one after it (latest done_before_step S + 2). Without
// async scheduling, and under vllm-legacy (whose copy path the contract does not describe): in order.
// Profile any takes main's window, the widest.
CopyWindow copy_window(const Trace& t, const Timeline& timeline, Profile profile);

}  // namespace r3::vllm
