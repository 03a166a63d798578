// libFuzzer's printers target: fuzzed cases and adapter texts through every printer
// (fuzz/libfuzzer/printers.hpp). An escape that lets a control byte reach a terminal, or data
// out of its comment or literal in generated source, aborts.
#include <cstddef>
#include <cstdint>

#include "fuzz/libfuzzer/printers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  r3::exercise_printers({data, size});
  return 0;
}
