// libFuzzer's trace target: bytes to a serving trace; the codecs must round-trip it and the fixed
// lifecycle models must judge it clean (fuzz/libfuzzer/trace.hpp). A failure prints the trace as
// JSON (a readable reproducer beside libFuzzer's raw artifact) and aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz/libfuzzer/trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (const std::optional<std::string> failure = r3::exercise_trace({data, size})) {
    std::fprintf(stderr, "r3fuzz_trace_fuzzer: %s\n", failure->c_str());
    std::abort();
  }
  return 0;
}
