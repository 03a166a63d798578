// The in-process ceiling for bench/run-benchmarks.sh: a libFuzzer target that does almost
// nothing with its input, built exactly like the differential target, so the ratio of their
// exec/s shows how much of a fuzzing second the harness itself spends.
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < size; ++i) sink = static_cast<uint8_t>(sink ^ data[i]);
  return 0;
}
