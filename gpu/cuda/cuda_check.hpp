// Every CUDA runtime call goes through R3_CUDA_TRY (nccl-tests CUDACHECK habit), which turns
// a failure into an r3::Error naming the file, line, call and CUDA's message.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "reference/error.hpp"

namespace r3::gpu::detail {

inline Error cuda_error(const char* file, int line, const char* expr, cudaError_t e) {
  return Error{std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " + cudaGetErrorName(e) + " (" +
               cudaGetErrorString(e) + ")"};
}

}  // namespace r3::gpu::detail

#define R3_CUDA_TRY(expr)                                                          \
  do {                                                                             \
    const cudaError_t r3_cuda_status_ = (expr);                                    \
    if (r3_cuda_status_ != cudaSuccess)                                            \
      return ::r3::gpu::detail::cuda_error(__FILE__, __LINE__, #expr, r3_cuda_status_); \
  } while (0)
