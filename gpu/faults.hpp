// Faults the GPU pipeline can carry (design.md's mutant table), used to measure how quickly
// the harness finds each bug class. Each is a named, deliberate change of the pipeline.
#pragma once

#include <string_view>
#include <vector>

#include "reference/error.hpp"

namespace r3::gpu {

enum class Fault {
  none,
  tp_major_order,      // the all-gatherv places group rank (d, t) at position t*D + d
  unpadded_offset,     // branch gathered_shards starts at sum_{d'<d} n_{d'} (no SP padding)
  no_trim,             // SP copies take T*ceil(n_d/T) rows instead of n_d
  floor_sp,            // SP shard size floor(n_d/T): shard test and shard offsets
  skip_tp_gather,      // sp_allgather copies the local shard, no TP all-gather
  last_shard_pad,      // an SP copy assumes only the last shard is short
  layer_unchecked,     // the layer is never checked against the capture buffer's layers
  narrow_int16,        // replay ids stored in int16 even when E > 32768
  off_by_one_copy,     // the capture kernel copies one row more than decided
  replay_per_rank,     // replay buffer sized M (before #50874)
  replay_dp_under_ep,  // replay buffer sized M*D even under EP
  chunk_row0,          // every DP chunk written at buffer row 0 (a no-op under vllm-50874)
};

std::string_view to_string(Fault f);
const std::vector<Fault>& all_faults();  // every fault but none, in table order
// "" parses to Fault::none; an unknown name is an error listing the valid names.
Result<Fault> parse_fault(std::string_view name);

}  // namespace r3::gpu
