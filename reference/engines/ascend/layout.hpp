// An Ascend step (../shared/spec/ascend-contract.md 2.3 and 2.4): the counts every rank runs with,
// the comm type, and the rows each TP rank holds when capture sees the routing (after
// moe_comm_method.prepare, ops/fused_moe/prepare_finalize.py, main 182b75ea).
#pragma once

#include <cstdint>
#include <vector>

#include "reference/capture.hpp"
#include "reference/case.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/layout.hpp"

namespace r3::ascend {

// What the Ascend derivation adds to a step (Step::engine_step): the comm type and whether SP
// is on, which capture reads (_EXTRA_CTX.moe_comm_type) besides the counts.
struct StepFields {
  Comm comm = Comm::allgather;
  bool sp = false;
  // Each DP rank's count as its own forward context holds it (num_tokens; with DP also
  // num_tokens_across_dp): what a fixed capture reads where D = 1 leaves no DP metadata.
  std::vector<int64_t> counts;
  bool operator==(const StepFields&) const = default;
};

inline const StepFields* step_fields_of(const Step& s) { return s.engine_step.get<StepFields>(); }
inline const StepFields* step_fields_of(const CaptureCall& call) {
  return call.engine_step ? call.engine_step->get<StepFields>() : nullptr;
}

// The counts n_d (spec 2.3): the base counts (idle dummy, DP max or the graph's capture size),
// then under SP on the V1 runner each rounded up to a multiple of T
// (model_runner_v1.py, _determine_batch_execution_and_padding). MRv2 keeps the agreed or raw
// counts (worker/v2/model_runner.py calls upstream dispatch_cg_and_sync_dp; #13946 removed the
// wrapper that rounded).
std::vector<int64_t> derive_counts(const Case& c);

// The step's comm type, from its largest count (comm.hpp).
Comm comm_of(const Case& c);

// Rows TP rank t of DP rank d holds at capture (spec 2.4), for counts n:
//  ALLGATHER: D = 1 the batch n_d; no SP max*D (DP all-gather of batches padded to max);
//             SP sum_d T*s_d (EP all-gather of the SP shards);
//  ALLTOALL, no SP: tensor_split of n_d rows (T rows when n_d < T): ceil for t < n_d mod T, else floor;
//  MC2 / FUSED_MC2, no SP: ceil(max/T) (padded_num_tokens, from the step's largest count);
//  ALLTOALL or MC2 with SP: s_d (prepare skips its pad and split, replace_allreduce).
int64_t rows_held(Comm comm, bool sp, const std::vector<int64_t>& n, int d, int t, int T);

// The step: one capture call per layer; valid cases only (validate() first).
Result<Step> derive_step(const Case& c);

}  // namespace r3::ascend
