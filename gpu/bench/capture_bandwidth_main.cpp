// r3fuzz_gpu_bench [ROWS] [REPETITIONS]: the capture kernel's bandwidth beside cudaMemcpy
// device-to-device on the same bytes, for a contiguous buffer (L = 1) and a strided one
// (L = 48, as in a large MoE model), K = 8. Prints one line per shape and the ratio.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpu/cuda/capture_bandwidth.hpp"

int main(int argc, char** argv) {
  const long long rows = argc > 1 ? std::atoll(argv[1]) : (1LL << 21);
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 50;
  if (rows < 1 || repetitions < 1) {
    std::fprintf(stderr, "usage: r3fuzz_gpu_bench [ROWS >= 1] [REPETITIONS >= 1]\n");
    return 2;
  }
  int status = 0;
  for (int layers : {1, 48}) {
    auto r = r3::gpu::detail::measure_capture_bandwidth(rows, layers, 8, repetitions);
    if (!r.ok()) {
      std::fprintf(stderr, "r3fuzz_gpu_bench: %s\n", r.error().message.c_str());
      return 1;
    }
    // Both move the bytes twice (read + write).
    const double capture_gbs = 2.0 * r->bytes / r->capture_seconds / 1e9;
    const double memcpy_gbs = 2.0 * r->bytes / r->memcpy_seconds / 1e9;
    std::printf("rows %lld, L %d, K 8 (%.1f MiB): capture %.1f GB/s, cudaMemcpy D2D %.1f GB/s, ratio %.2f%s\n", rows,
                layers, r->bytes / 1048576.0, capture_gbs, memcpy_gbs, capture_gbs / memcpy_gbs,
                r->verified ? "" : "  (CAPTURED ROWS WRONG)");
    if (!r->verified) status = 1;
  }
  return status;
}
