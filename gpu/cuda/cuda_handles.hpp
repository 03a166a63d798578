// Owners of CUDA resources: a stream, an event and device memory, each released when its owner
// goes out of scope, so that an early return through R3_CUDA_TRY leaks nothing. Creation is
// checked and returns an error value; release happens in destructors, which cannot return one:
// a failed release leaves CUDA's sticky error behind, and the next checked call reports it.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "gpu/cuda/cuda_check.hpp"

namespace r3::gpu::detail {

// A handle that releases itself through `Release` (cudaStreamDestroy, ncclCommDestroy, ...) on
// `device`: streams, events, memory and communicators belong to the device that was current when
// they were made.
template <class Handle, auto Release>
class CudaOwned {
 public:
  CudaOwned() = default;
  CudaOwned(const CudaOwned&) = delete;
  CudaOwned& operator=(const CudaOwned&) = delete;
  CudaOwned(CudaOwned&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), device_(other.device_) {}
  CudaOwned& operator=(CudaOwned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
      device_ = other.device_;
    }
    return *this;
  }
  ~CudaOwned() { reset(); }

  Handle get() const { return handle_; }
  int device() const { return device_; }

 public:
  // Takes ownership of `handle`, made on `device`.
  void adopt(Handle handle, int device) {
    reset();
    handle_ = handle;
    device_ = device;
  }

 private:
  void reset() {
    if (!handle_) return;
    // Released on the owner's device, then the caller's device is restored (see the file comment
    // for why no result is returned from here).
    int current = 0;
    const bool switched = cudaGetDevice(&current) == cudaSuccess && current != device_ &&
                          cudaSetDevice(device_) == cudaSuccess;
    Release(std::exchange(handle_, nullptr));
    if (switched) cudaSetDevice(current);
  }

  Handle handle_ = nullptr;
  int device_ = 0;
};

// A blocking stream on `device`: ordered after work on that device's default stream (Thrust's
// fills), which the pipeline relies on.
class CudaStream : public CudaOwned<cudaStream_t, &cudaStreamDestroy> {
 public:
  Status create(int device) {
    R3_CUDA_TRY(cudaSetDevice(device));
    cudaStream_t s = nullptr;
    R3_CUDA_TRY(cudaStreamCreate(&s));
    adopt(s, device);
    return ok_status();
  }
};

class CudaEvent : public CudaOwned<cudaEvent_t, &cudaEventDestroy> {
 public:
  Status create() {
    int device = 0;
    R3_CUDA_TRY(cudaGetDevice(&device));
    cudaEvent_t e = nullptr;
    R3_CUDA_TRY(cudaEventCreate(&e));
    adopt(e, device);
    return ok_status();
  }
};

// `count` int32 values of device memory on `device` (at least one, so the pointer is never null).
class DeviceInts : public CudaOwned<void*, &cudaFree> {
 public:
  Status allocate(int device, int64_t count) {
    R3_CUDA_TRY(cudaSetDevice(device));
    void* p = nullptr;
    R3_CUDA_TRY(cudaMalloc(&p, static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(int32_t)));
    adopt(p, device);
    return ok_status();
  }
  int32_t* data() const { return static_cast<int32_t*>(get()); }
};

}  // namespace r3::gpu::detail
