// The host executor: runs a capture policy on concrete routing values, the way an engine
// would, so that policy models can be judged in concrete mode like any other implementation.
// Every call's tensors are materialised with routing_value(); each rank gets a guarded
// capture buffer [M, L*K] (rows start as untouched_value(), guard rows as kCanary) and, on
// monolithic cases, a guarded replay buffer [rows, K] that the kernel fills with
// replay_value() of every row it processes (rows the kernel never writes hold
// kReplayUntouched). Writes land in the guard rows when they run past a buffer; guard
// regions are sized to hold every write the decisions ask for, up to kMaxGuardRows.
#pragma once

#include <cstdint>

#include "reference/case.hpp"
#include "reference/guard_rows.hpp"
#include "reference/implementation.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3 {

// `value` as a buffer of `bits`-wide integers stores it: truncated, then sign-extended.
constexpr int32_t stored_value(int32_t value, int bits) {
  if (bits >= 32) return value;
  const int shift = 32 - bits;  // C++20: << on unsigned wraps, >> on signed is arithmetic
  return static_cast<int32_t>(static_cast<uint32_t>(value) << shift) >> shift;
}

struct HostRunStats {
  int64_t rows_folded = 0;  // writes beyond the guard regions, stored on their outermost row
};

// Runs `policy` on the step. `stats` (optional) counts what the guard regions could not hold.
// `max_guard_rows` bounds the capture buffer's guard regions (at least kMinGuardRows): an
// external adapter's decisions are data, so its buffers get no more guard rows than the case
// needs (fuzz/adapter/external_implementation.cpp).
ConcreteOutcome execute_on_host(const Case& c, const Step& step, const CapturePolicy& policy,
                                HostRunStats* stats = nullptr, int64_t max_guard_rows = kMaxGuardRows);

}  // namespace r3
