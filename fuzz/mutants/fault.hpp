// The named faults of design.md's mutant table: bug classes injected into an implementation
// that is otherwise correct, to measure how fast the harness finds each one.
#pragma once

#include <span>
#include <string_view>

#include "reference/error.hpp"

namespace r3 {

enum class Fault {
  replay_per_rank,     // replay buffer sized M (before #50874)
  replay_dp_under_ep,  // replay buffer sized M*D even under EP+SP
  tp_major_order,      // shards ordered t*D + d
  unpadded_offset,     // branch 4 starts at the unpadded prefix sum of n
  no_trim,             // copies T*s_d rows instead of n_d
  floor_sp,            // SP shard size floor(n/T)
  skip_tp_gather,      // sp_shard path copies the local shard without the TP all-gather
  last_shard_pad,      // assumes only the last SP shard is short
  layer_unchecked,     // layer >= L not rejected
  narrow_int16,        // expert ids stored in int16 with E > 32767
  off_by_one_copy,     // the capture copies one row too many
  chunk_row0,          // every DP chunk written at row 0
};

// Every fault, in design.md's table order.
std::span<const Fault> all_faults();

// "replay-per-rank", ... (design.md's names).
std::string_view to_string(Fault f);

// The bug class design.md gives the fault ("overflow", "ordering", ...).
std::string_view fault_class(Fault f);

// Parses a design.md name; the error lists every valid name.
Result<Fault> parse_fault(std::string_view name);

}  // namespace r3
