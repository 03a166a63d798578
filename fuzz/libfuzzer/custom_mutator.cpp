// The structure-aware hooks: thin wrappers over mutator.hpp. A build with
// R3FUZZ_PLAIN_MUTATION leaves them out, so libFuzzer falls back to its byte mutations (the
// baseline of bench/mutator-vs-bytes.sh).
#ifndef R3FUZZ_PLAIN_MUTATION

#include <cstddef>
#include <cstdint>

#include "fuzz/libfuzzer/mutator.hpp"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return r3::mutate_bytes(data, size, max_size, seed);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                                            uint8_t* out, size_t max_out_size, unsigned int seed) {
  return r3::cross_over_bytes({data1, size1}, {data2, size2}, out, max_out_size, seed);
}

#endif  // R3FUZZ_PLAIN_MUTATION
