// A capture policy with one named fault injected: the policy-side carriers of design.md's
// mutant table. The fault is applied to the decisions and allocation of a base policy
// (normally r3-fixed, which is correct on the whole model), so that any difference from the
// base is the fault's doing and nothing else.
#pragma once

#include <memory>

#include "reference/fault.hpp"
#include "reference/policy.hpp"

namespace r3 {

// The policy named "<base>+<fault>" that behaves like `base` except for `fault` (the allocation
// and decision faults through reference/fault.hpp, the gather faults emulated in the decision):
//  replay-per-rank     monolithic replay buffer of M rows
//  replay-dp-under-ep  monolithic replay buffer of M*D rows, also under EP+SP
//  tp-major-order      gathered SP shards located as if the EP group were ordered t*D + d
//  unpadded-offset     gathered_shards starts at sum(num_tokens_across_dp[:d]) (no SP padding)
//  no-trim             SP branches copy T*s_d rows (the padded shard total) instead of n_d
//  floor-sp            SP shard size floor(n_d/T): offsets and row counts use it
//  skip-tp-gather      sp_allgather copies from the local shard, without the TP all-gather
//  last-shard-pad      SP branches take (T-1)*s_d rows as real when padding spans several shards
//  layer-unchecked     layer >= L is not rejected (the case format cannot express such a layer)
//  narrow-int16        replay ids stored in 16 bits whatever E is
//  off-by-one-copy     every copy of a call moves one row too many
//  chunk-row0          every DP chunk is written at buffer row 0
std::unique_ptr<CapturePolicy> make_faulty_policy(std::unique_ptr<CapturePolicy> base, Fault fault);

}  // namespace r3
