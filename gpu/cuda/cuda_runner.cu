// The CUDA backends: the kernels of gpu/detail/kernels.hpp through Thrust's CUDA system on
// device 0. Backend virtual runs every rank on that one device and all-gathers with async
// device-to-device copies into each rank's offset; backend nccl all-gathers through NCCL
// across every visible GPU. The only .cu translation unit of the library (nvcc is slow); the
// bandwidth benchmark has its own, in gpu/bench.
#include <thrust/device_vector.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>

#include <exception>
#include <memory>
#include <string>

#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_handles.hpp"
#include "gpu/cuda/nccl_gather.hpp"
#include "gpu/detail/execute.inl"
#include "gpu/detail/runner.hpp"

namespace r3::gpu::detail {
namespace {

struct CudaExec {
  template <class T>
  using Vector = thrust::device_vector<T>;

  cudaStream_t stream = nullptr;
  NcclGather* nccl = nullptr;  // null: virtual ranks

  auto policy() const { return thrust::cuda::par.on(stream); }
  template <class T>
  Vector<T> upload(const std::vector<T>& v) const { return Vector<T>(v.begin(), v.end()); }
  template <class T>
  Vector<T> zeros(int64_t n) const { return Vector<T>(static_cast<size_t>(n)); }
  template <class T>
  std::vector<T> download(const Vector<T>& v) const {
    std::vector<T> host(v.size());
    thrust::copy(v.begin(), v.end(), host.begin());
    return host;
  }
  template <class T>
  static T* raw(Vector<T>& v) { return thrust::raw_pointer_cast(v.data()); }

  Status gather(Vector<int32_t>& arena, const std::vector<GatherOp>& ops) const {
    int32_t* a = raw(arena);
    R3_CUDA_TRY(cudaStreamSynchronize(stream));  // contributions materialised
    if (nccl) return nccl->run(a, ops);
    for (const GatherOp& op : ops)
      for (const GatherPiece& p : op.pieces)
        R3_CUDA_TRY(cudaMemcpyAsync(a + p.dst, a + p.src, static_cast<size_t>(p.count) * sizeof(int32_t),
                                    cudaMemcpyDeviceToDevice, stream));
    return ok_status();
  }
  Status finish() const {
    R3_CUDA_TRY(cudaStreamSynchronize(stream));
    R3_CUDA_TRY(cudaGetLastError());
    return ok_status();
  }
};

class CudaRunner final : public Runner {
 public:
  explicit CudaRunner(std::unique_ptr<NcclGather> nccl) : nccl_(std::move(nccl)) {}
  Status init() { return stream_.create(0); }

  Result<DeviceResult> execute(const DevicePlan& plan) override {
    CudaExec exec{stream_.get(), nccl_.get()};
    try {
      return execute_plan(exec, plan);
    } catch (const std::exception& e) {  // Thrust reports CUDA failures by exception
      return Error{std::string("CUDA: ") + e.what()};
    }
  }

 private:
  std::unique_ptr<NcclGather> nccl_;
  CudaStream stream_;
};

}  // namespace

Result<std::unique_ptr<Runner>> make_cuda_runner(Backend backend) {
  if (backend != Backend::virtual_ && backend != Backend::nccl)
    return Error{"make_cuda_runner: backend host is not a CUDA backend"};
  // Spelled here: r3fuzz_gpu_cuda sits below r3fuzz_gpu (gpu_options.cpp) in the link order.
  const std::string name = backend == Backend::nccl ? "nccl" : "virtual";
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    return Error{"gpu backend " + name + ": no CUDA device (" +
                 (e != cudaSuccess ? std::string(cudaGetErrorString(e)) : std::string("0 devices")) + ")"};
  }
  std::unique_ptr<NcclGather> nccl;
  if (backend == Backend::nccl) {
    R3_TRY(nccl, make_nccl_gather());
  }
  auto runner = std::make_unique<CudaRunner>(std::move(nccl));
  R3_TRY_STATUS(runner->init());
  return std::unique_ptr<Runner>(std::move(runner));
}

}  // namespace r3::gpu::detail
