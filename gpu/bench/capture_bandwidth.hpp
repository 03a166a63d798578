// Capture-kernel bandwidth against cudaMemcpy device-to-device on the same bytes, for
// r3fuzz_gpu_bench (defined in capture_bandwidth.cu, its own nvcc unit, so the library does
// not carry the benchmark).
#pragma once

#include <cstdint>

#include "reference/error.hpp"

namespace r3::gpu::detail {

struct CaptureBandwidth {
  int64_t bytes = 0;             // bytes one capture (or one memcpy) moves: rows * K * 4
  double capture_seconds = 0;    // per capture, averaged over the repetitions
  double memcpy_seconds = 0;     // per cudaMemcpyAsync of the same bytes
  bool verified = false;         // the captured rows hold the source rows
};

// One [rows, K] tensor captured into a [rows, layers, K] buffer at the last layer.
Result<CaptureBandwidth> measure_capture_bandwidth(int64_t rows, int layers, int top_k, int repetitions);

}  // namespace r3::gpu::detail
