// r3fuzz_gpu_bench [ROWS] [REPETITIONS]: the capture kernel's bandwidth beside cudaMemcpy
// device-to-device on the same bytes, for a contiguous buffer (L = 1) and a strided one
// (L = 48, as in a large MoE model), K = 8. Prints one line per shape and the ratio.
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "gpu/bench/capture_bandwidth.hpp"

namespace {

// The whole of `text` as a number >= 1 and <= most, or nullopt ("12x", "", "0" and "-3" are refused).
std::optional<long long> positive(const char* text, long long most) {
  long long value = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, value);
  if (error != std::errc{} || stop != end || value < 1 || value > most) return std::nullopt;
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<long long> rows = argc > 1 ? positive(argv[1], 1LL << 40) : std::optional<long long>(1LL << 21);
  const std::optional<long long> repetitions = argc > 2 ? positive(argv[2], 1 << 20) : std::optional<long long>(50);
  if (argc > 3 || !rows || !repetitions) {
    std::fprintf(stderr, "usage: r3fuzz_gpu_bench [ROWS: 1 to 2^40] [REPETITIONS: 1 to 2^20]\n");
    return 2;
  }
  int status = 0;
  for (int layers : {1, 48}) {
    auto r = r3::gpu::detail::measure_capture_bandwidth(*rows, layers, 8, static_cast<int>(*repetitions));
    if (!r.ok()) {
      std::fprintf(stderr, "r3fuzz_gpu_bench: %s\n", r.error().message.c_str());
      return 1;
    }
    // Both move the bytes twice (read + write).
    const double capture_gbs = 2.0 * r->bytes / r->capture_seconds / 1e9;
    const double memcpy_gbs = 2.0 * r->bytes / r->memcpy_seconds / 1e9;
    std::printf("rows %lld, L %d, K 8 (%.1f MiB): capture %.1f GB/s, cudaMemcpy D2D %.1f GB/s, ratio %.2f%s\n", *rows,
                layers, r->bytes / 1048576.0, capture_gbs, memcpy_gbs, capture_gbs / memcpy_gbs,
                r->verified ? "" : "  (CAPTURED ROWS WRONG)");
    if (!r->verified) status = 1;
  }
  return status;
}
