// The capture kernel (gpu/detail/kernels.hpp) timed with CUDA events against a device-to-device
// cudaMemcpyAsync of the same bytes, for r3fuzz_gpu_bench. Its own nvcc unit, so that the
// library (gpu/cuda/cuda_runner.cu) does not carry the benchmark.
#include <thrust/device_vector.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sequence.h>
#include <thrust/system/cuda/execution_policy.h>

#include <exception>
#include <string>
#include <vector>

#include "gpu/bench/capture_bandwidth.hpp"
#include "gpu/cuda/cuda_check.hpp"
#include "gpu/cuda/cuda_handles.hpp"
#include "gpu/detail/kernels.hpp"

namespace r3::gpu::detail {
namespace {

// Elapsed seconds per repetition of `work` (which returns a Status) on `stream`, timed with
// CUDA events after one warm-up run.
template <class Work>
Result<double> time_per_repetition(cudaStream_t stream, int repetitions, Work work) {
  CudaEvent begin, end;
  R3_TRY_STATUS(begin.create());
  R3_TRY_STATUS(end.create());
  R3_TRY_STATUS(work());
  R3_CUDA_TRY(cudaEventRecord(begin.get(), stream));
  for (int i = 0; i < repetitions; ++i) R3_TRY_STATUS(work());
  R3_CUDA_TRY(cudaEventRecord(end.get(), stream));
  R3_CUDA_TRY(cudaEventSynchronize(end.get()));
  float ms = 0;
  R3_CUDA_TRY(cudaEventElapsedTime(&ms, begin.get(), end.get()));
  R3_CUDA_TRY(cudaGetLastError());  // a failed kernel launch
  return ms / 1000.0 / repetitions;
}

// The job that copies the [rows, K] source at arena element 0 into layer L-1 of the
// [rows, L, K] buffer right after it.
CaptureJob last_layer_job(int64_t rows, int layers, int top_k) {
  const int64_t src_elems = rows * top_k, dst_elems = rows * layers * top_k;
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
  return job;
}

Result<CaptureBandwidth> measure(int64_t rows, int layers, int top_k, int repetitions) {
  const int64_t src_elems = rows * top_k, dst_elems = rows * layers * top_k;
  // Source, capture buffer, then the memcpy's destination.
  thrust::device_vector<int32_t> arena(static_cast<size_t>(2 * src_elems + dst_elems));
  int32_t* a = thrust::raw_pointer_cast(arena.data());
  thrust::sequence(thrust::cuda::par, arena.begin(), arena.begin() + src_elems);
  const thrust::device_vector<CaptureJob> jobs(1, last_layer_job(rows, layers, top_k));
  const thrust::device_vector<int64_t> ends(1, src_elems);
  const thrust::device_vector<int64_t> offsets(1, 0);
  const CaptureRows body{thrust::raw_pointer_cast(jobs.data()), thrust::raw_pointer_cast(ends.data()), 1,
                         thrust::raw_pointer_cast(offsets.data()), a};
  CudaStream stream;
  R3_TRY_STATUS(stream.create(0));
  CaptureBandwidth out;
  out.bytes = src_elems * static_cast<int64_t>(sizeof(int32_t));
  R3_TRY(out.capture_seconds, time_per_repetition(stream.get(), repetitions, [&]() -> Status {
    thrust::for_each(thrust::cuda::par.on(stream.get()), thrust::counting_iterator<int64_t>(0),
                     thrust::counting_iterator<int64_t>(src_elems), body);
    return ok_status();
  }));
  R3_TRY(out.memcpy_seconds, time_per_repetition(stream.get(), repetitions, [&]() -> Status {
    R3_CUDA_TRY(cudaMemcpyAsync(a + src_elems + dst_elems, a, static_cast<size_t>(out.bytes),
                                cudaMemcpyDeviceToDevice, stream.get()));
    return ok_status();
  }));
  R3_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  // Row rows-1, slot k, of the last layer must hold source element (rows-1)*K + k.
  const int64_t last = src_elems + (rows - 1) * layers * top_k + int64_t{layers - 1} * top_k;
  std::vector<int32_t> got(static_cast<size_t>(top_k));
  thrust::copy(arena.begin() + last, arena.begin() + last + top_k, got.begin());
  out.verified = true;
  for (int k = 0; k < top_k; ++k)
    out.verified &= got[static_cast<size_t>(k)] == static_cast<int32_t>((rows - 1) * top_k + k);
  return out;
}

}  // namespace

Result<CaptureBandwidth> measure_capture_bandwidth(int64_t rows, int layers, int top_k, int repetitions) {
  if (rows < 1 || layers < 1 || top_k < 1 || repetitions < 1) return Error{"measure_capture_bandwidth: sizes must be >= 1"};
  try {
    return measure(rows, layers, top_k, repetitions);
  } catch (const std::exception& e) {  // Thrust reports CUDA failures by exception
    return Error{std::string("CUDA: ") + e.what()};
  }
}

}  // namespace r3::gpu::detail
