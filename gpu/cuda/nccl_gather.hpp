// The all-gatherv over NCCL, as vLLM does it: one process, one communicator over all visible
// GPUs (ncclCommInitAll); group rank r's contribution lives on GPU r % N; ncclAllGather when
// every contribution has the same size and there is one per GPU in rank order, otherwise a
// grouped set of ncclBroadcast calls, one per root, each writing its slice of the output.
// Every GPU ends up with the gathered tensor; they are compared, and GPU 0's copy is written
// back into the pipeline's arena (on device 0). Host types only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/detail/device_plan.hpp"
#include "reference/error.hpp"

namespace r3::gpu::detail {

class NcclGather {
 public:
  virtual ~NcclGather() = default;
  // arena: device 0 memory holding every contribution and every output of `ops`.
  virtual Status run(int32_t* arena, const std::vector<GatherOp>& ops) = 0;
};

// "skipped: nccl needs 2 GPUs, found 1" on a single-GPU machine.
Result<std::unique_ptr<NcclGather>> make_nccl_gather();

}  // namespace r3::gpu::detail
