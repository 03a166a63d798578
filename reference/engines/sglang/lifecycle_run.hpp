// The walk of a trace through SGLang's request lifecycle (docs/lifecycle-contract.md 2.1, 2.2):
// KV slots per DP rank (lifecycle_cache.hpp), each forward's captured rows stored at its rows'
// slots (S2), each finished request's rows read back through req_to_token (S4).
#pragma once

#include <optional>
#include <span>
#include <string>

#include "reference/engines/sglang/lifecycle_behaviour.hpp"
#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::sglang {

struct WalkResult {
  LifecycleOutcome outcome;
  // Where the trace asks what SGLang never does: a batch whose KV does not fit, a hit its radix
  // tree cannot serve, a weight update whose flush finds requests pending, an aborted request
  // that runs again though SGLang ends it at once. The walk stops there; check_profile() reports
  // it, run() reports it as a crash (the flush's is a real one: an assertion).
  std::optional<int> refused_at;
  std::string refusal;
};

// Runs a valid trace (build_timeline and check() passed); `delivery` holds one entry per step.
WalkResult walk_trace(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                      const Behaviour& behaviour);

}  // namespace r3::sglang
