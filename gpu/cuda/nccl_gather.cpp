#include "gpu/cuda/nccl_gather.hpp"

#include <nccl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_handles.hpp"

#define R3_NCCL_TRY(expr)                                                                              \
  do {                                                                                                 \
    const ncclResult_t r3_nccl_status_ = (expr);                                                       \
    if (r3_nccl_status_ != ncclSuccess)                                                                \
      return ::r3::Error{std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + #expr +        \
                         " failed: " + ncclGetErrorString(r3_nccl_status_)};                           \
  } while (0)

namespace r3::gpu::detail {
namespace {

// A communicator of one GPU, destroyed on that GPU.
using NcclComm = CudaOwned<ncclComm_t, &ncclCommDestroy>;

class Nccl final : public NcclGather {
 public:
  Status init(int gpus) {
    std::vector<ncclComm_t> made(static_cast<size_t>(gpus), nullptr);
    R3_NCCL_TRY(ncclCommInitAll(made.data(), gpus, nullptr));
    comms_.resize(made.size());
    for (int g = 0; g < gpus; ++g) comms_[static_cast<size_t>(g)].adopt(made[static_cast<size_t>(g)], g);
    streams_.resize(made.size());
    for (int g = 0; g < gpus; ++g) R3_TRY_STATUS(streams_[static_cast<size_t>(g)].create(g));
    return ok_status();
  }

  Status run(int32_t* arena, const std::vector<GatherOp>& ops) override {
    for (const GatherOp& op : ops) R3_TRY_STATUS(run_one(arena, op));
    R3_CUDA_TRY(cudaSetDevice(0));
    return ok_status();
  }

 private:
  Status run_one(int32_t* arena, const GatherOp& op) {
    if (op.pieces.empty()) return ok_status();
    const int n = static_cast<int>(comms_.size());
    int64_t base = op.pieces.front().dst, total = 0;
    for (const GatherPiece& p : op.pieces) base = std::min(base, p.dst), total += p.count;
    if (total == 0) return ok_status();
    // Each contribution on the GPU that owns it.
    std::vector<DeviceInts> send(op.pieces.size());
    for (size_t r = 0; r < op.pieces.size(); ++r) {
      const GatherPiece& p = op.pieces[r];
      const int owner = static_cast<int>(r) % n;
      R3_TRY_STATUS(send[r].allocate(owner, p.count));
      R3_CUDA_TRY(cudaMemcpyPeer(send[r].data(), owner, arena + p.src, 0, static_cast<size_t>(p.count) * 4));
    }
    std::vector<DeviceInts> recv(static_cast<size_t>(n));
    for (int g = 0; g < n; ++g) R3_TRY_STATUS(recv[static_cast<size_t>(g)].allocate(g, total));

    bool equal = static_cast<int>(op.pieces.size()) == n;
    for (size_t r = 0; r < op.pieces.size() && equal; ++r)
      equal = op.pieces[r].count == op.pieces[0].count &&
              op.pieces[r].dst == base + static_cast<int64_t>(r) * op.pieces[0].count;
    R3_NCCL_TRY(ncclGroupStart());
    if (equal) {
      for (int g = 0; g < n; ++g) {
        R3_NCCL_TRY(ncclAllGather(send[static_cast<size_t>(g)].data(), recv[static_cast<size_t>(g)].data(),
                                  static_cast<size_t>(op.pieces[0].count), ncclInt32, comms_[static_cast<size_t>(g)].get(),
                                  streams_[static_cast<size_t>(g)].get()));
      }
    } else {
      for (size_t r = 0; r < op.pieces.size(); ++r) {
        const GatherPiece& p = op.pieces[r];
        if (p.count == 0) continue;
        const int root = static_cast<int>(r) % n;
        for (int g = 0; g < n; ++g) {
          int32_t* out = recv[static_cast<size_t>(g)].data() + (p.dst - base);
          R3_NCCL_TRY(ncclBroadcast(g == root ? send[r].data() : out, out, static_cast<size_t>(p.count), ncclInt32, root,
                                    comms_[static_cast<size_t>(g)].get(), streams_[static_cast<size_t>(g)].get()));
        }
      }
    }
    R3_NCCL_TRY(ncclGroupEnd());
    for (int g = 0; g < n; ++g) {
      R3_CUDA_TRY(cudaSetDevice(g));
      R3_CUDA_TRY(cudaStreamSynchronize(streams_[static_cast<size_t>(g)].get()));
    }
    // Every GPU must hold the same gathered tensor; GPU 0's goes back into the arena.
    std::vector<int32_t> first(static_cast<size_t>(total)), other(static_cast<size_t>(total));
    R3_CUDA_TRY(cudaSetDevice(0));
    R3_CUDA_TRY(cudaMemcpy(first.data(), recv[0].data(), first.size() * 4, cudaMemcpyDeviceToHost));
    for (int g = 1; g < n; ++g) {
      R3_CUDA_TRY(cudaSetDevice(g));
      R3_CUDA_TRY(cudaMemcpy(other.data(), recv[static_cast<size_t>(g)].data(), other.size() * 4, cudaMemcpyDeviceToHost));
      if (other != first) {
        const auto at = std::mismatch(first.begin(), first.end(), other.begin()).first - first.begin();
        return Error{"nccl: GPU " + std::to_string(g) + "'s gathered tensor differs from GPU 0's at element " +
                     std::to_string(at)};
      }
    }
    R3_CUDA_TRY(cudaSetDevice(0));
    R3_CUDA_TRY(cudaMemcpy(arena + base, recv[0].data(), first.size() * 4, cudaMemcpyDeviceToDevice));
    return ok_status();
  }

  // Declared before the streams, so each GPU's stream goes before its communicator.
  std::vector<NcclComm> comms_;
  std::vector<CudaStream> streams_;
};

}  // namespace

Result<std::unique_ptr<NcclGather>> make_nccl_gather() {
  int gpus = 0;
  const cudaError_t e = cudaGetDeviceCount(&gpus);
  if (e != cudaSuccess) gpus = 0;
  if (gpus < 2) return Error{"skipped: nccl needs 2 GPUs, found " + std::to_string(gpus)};
  auto nccl = std::make_unique<Nccl>();
  R3_TRY_STATUS(nccl->init(gpus));
  return std::unique_ptr<NcclGather>(std::move(nccl));
}

}  // namespace r3::gpu::detail
