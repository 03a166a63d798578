// The CUDA backends: the kernels of gpu/detail/kernels.hpp through Thrust's CUDA system on
// device 0. Backend virtual runs every rank on that one device and all-gathers with async
// device-to-device copies into each rank's offset; backend nccl all-gathers through NCCL
// across every visible GPU. The only .cu translation unit of r3fuzz (nvcc is slow).
#include <thrust/device_vector.h>
#include <thrust/sequence.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>

#include <exception>
#include <memory>
#include <string>

#include "gpu/cuda/cuda_check.hpp"
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
  ~CudaRunner() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  Status init() {
    R3_CUDA_TRY(cudaSetDevice(0));
    R3_CUDA_TRY(cudaStreamCreate(&stream_));  // blocking: ordered after thrust's default-stream fills
    return ok_status();
  }

  Result<DeviceResult> execute(const DevicePlan& plan) override {
    CudaExec exec{stream_, nccl_.get()};
    try {
      return execute_plan(exec, plan);
    } catch (const std::exception& e) {  // Thrust reports CUDA failures by exception
      return Error{std::string("CUDA: ") + e.what()};
    }
  }

 private:
  std::unique_ptr<NcclGather> nccl_;
  cudaStream_t stream_ = nullptr;
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

// ---- capture-kernel bandwidth (gpu/cuda/capture_bandwidth.hpp) ----
#include "gpu/cuda/capture_bandwidth.hpp"

namespace r3::gpu::detail {
namespace {

// Elapsed seconds per repetition of `work` on `stream`, timed with CUDA events.
template <class Work>
Result<double> time_per_repetition(cudaStream_t stream, int repetitions, Work work) {
  cudaEvent_t begin = nullptr, end = nullptr;
  R3_CUDA_TRY(cudaEventCreate(&begin));
  R3_CUDA_TRY(cudaEventCreate(&end));
  work();  // warm-up
  R3_CUDA_TRY(cudaEventRecord(begin, stream));
  for (int i = 0; i < repetitions; ++i) work();
  R3_CUDA_TRY(cudaEventRecord(end, stream));
  R3_CUDA_TRY(cudaEventSynchronize(end));
  float ms = 0;
  R3_CUDA_TRY(cudaEventElapsedTime(&ms, begin, end));
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  R3_CUDA_TRY(cudaGetLastError());
  return ms / 1000.0 / repetitions;
}

Result<CaptureBandwidth> measure(int64_t rows, int layers, int top_k, int repetitions) {
  const int64_t src_elems = rows * top_k, dst_elems = rows * layers * top_k;
  thrust::device_vector<int32_t> arena(static_cast<size_t>(2 * src_elems + dst_elems));
  int32_t* a = thrust::raw_pointer_cast(arena.data());
  thrust::sequence(thrust::cuda::par, arena.begin(), arena.begin() + src_elems);
  CaptureJob job;
  job.src = 0;
  job.src_lo = 0;
  job.src_hi = src_elems;
  job.rows = rows;
  job.dst = src_elems;
  job.dst_lo = src_elems;
  job.dst_hi = src_elems + dst_elems;
  job.top_k = top_k;
  job.row_width = layers * top_k;
  job.layer = layers - 1;
  thrust::device_vector<CaptureJob> jobs(1, job);
  thrust::device_vector<int64_t> ends(1, src_elems);
  thrust::device_vector<int64_t> offsets(1, 0);
  const CaptureRows body{thrust::raw_pointer_cast(jobs.data()), thrust::raw_pointer_cast(ends.data()), 1,
                         thrust::raw_pointer_cast(offsets.data()), a};
  cudaStream_t stream = nullptr;
  R3_CUDA_TRY(cudaStreamCreate(&stream));
  CaptureBandwidth out;
  out.bytes = src_elems * 4;
  R3_TRY(out.capture_seconds, time_per_repetition(stream, repetitions, [&] {
    thrust::for_each(thrust::cuda::par.on(stream), thrust::counting_iterator<int64_t>(0),
                     thrust::counting_iterator<int64_t>(src_elems), body);
  }));
  R3_TRY(out.memcpy_seconds, time_per_repetition(stream, repetitions, [&] {
    cudaMemcpyAsync(a + src_elems + dst_elems, a, static_cast<size_t>(out.bytes), cudaMemcpyDeviceToDevice, stream);
  }));
  R3_CUDA_TRY(cudaStreamSynchronize(stream));
  cudaStreamDestroy(stream);
  // Row rows-1, slot k, of the last layer must hold source element (rows-1)*K + k.
  const int64_t last = src_elems + (rows - 1) * layers * top_k + int64_t{layers - 1} * top_k;
  std::vector<int32_t> got(static_cast<size_t>(top_k));
  thrust::copy(arena.begin() + last, arena.begin() + last + top_k, got.begin());
  out.verified = true;
  for (int k = 0; k < top_k; ++k) out.verified &= got[static_cast<size_t>(k)] == static_cast<int32_t>((rows - 1) * top_k + k);
  return out;
}

}  // namespace

Result<CaptureBandwidth> measure_capture_bandwidth(int64_t rows, int layers, int top_k, int repetitions) {
  if (rows < 1 || layers < 1 || top_k < 1 || repetitions < 1) return Error{"measure_capture_bandwidth: sizes must be >= 1"};
  try {
    return measure(rows, layers, top_k, repetitions);
  } catch (const std::exception& e) {
    return Error{std::string("CUDA: ") + e.what()};
  }
}

}  // namespace r3::gpu::detail
