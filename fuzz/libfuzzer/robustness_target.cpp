// libFuzzer's robustness target: arbitrary bytes to every decoder and validator. A crash,
// a sanitizer report or a hang (libFuzzer -timeout) is a bug in r3fuzz.
#include <cstddef>
#include <cstdint>

#include "fuzz/libfuzzer/robustness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  r3::exercise_decoders({data, size});
  return 0;
}
