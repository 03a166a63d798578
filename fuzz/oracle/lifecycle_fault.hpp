// Lifecycle faults: hypothetical bugs in how an engine assembles a request's routes, injected
// into a lifecycle model's outcome so that the trace oracle can be shown to catch each of them
// (r3fuzz mutants --traces: fuzz/mutants/trace_kill_matrix.hpp). Each is a bug R3 users have
// reported in some form (docs/MUTANTS.md, "Lifecycle faults"); the copy-order faults are the
// races of the lifecycle contract's section 5 (docs/TRACES.md, "Copies").
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "reference/error.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3 {

enum class LifecycleFault : uint8_t {
  shift_one,           // every returned row is attributed one position off (row i holds position i + 1's route)
  drop_last,           // the last row is dropped at finish
  preempted_freed,     // a preempted request's rows were freed: its prompt rows read back as zeros
  hit_before_store,    // a hit is served before its rows are stored: the hit rows read back as zeros
  version_not_tracked, // every row carries the first weight version
  // Copy-order faults: what a copy to host that is not ordered as the engine orders it returns,
  // under the trace's completion order (its "copies" record, reference/trace/copies.hpp). A row is
  // traced back to the forward that wrote it (the last kept forward of its request, position and
  // weight version before the read) and to its batch row there.
  copy_reads_next_forward,  // a late copy reads the buffer the next forwards overwrote (no clone, no
                            // staging snapshot, no event synchronized before the next copy)
  copy_not_awaited,         // a read does not wait for the copy: rows of a copy that lands after it are zeros
  prefill_never_committed,  // a handler path never commits: rows of extend-only steps are zeros
};

// The five faults of how rows are kept and assembled (their effect does not depend on the copies
// record), and the copy-order faults; both in the order above.
std::span<const LifecycleFault> all_lifecycle_faults();
std::span<const LifecycleFault> all_copy_faults();
bool is_copy_fault(LifecycleFault f);
std::string_view to_string(LifecycleFault f);
std::string_view describe(LifecycleFault f);
Result<LifecycleFault> parse_lifecycle_fault(std::string_view text);

// `outcome` as a model with the fault would have returned it.
void apply_lifecycle_fault(LifecycleFault f, const Trace& t, const Timeline& timeline, LifecycleOutcome& outcome);

}  // namespace r3
