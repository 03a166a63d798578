// Linked into CUDA builds that found no NCCL.
#include "gpu/cuda/nccl_gather.hpp"

namespace r3::gpu::detail {

Result<std::unique_ptr<NcclGather>> make_nccl_gather() {
  return Error{"gpu backend nccl: this CUDA build found no NCCL (nccl.h and libnccl; set NCCL_ROOT and reconfigure)"};
}

}  // namespace r3::gpu::detail
