// The structure-aware hooks: thin wrappers over mutator.hpp. A build with
// R3FUZZ_PLAIN_MUTATION leaves them out, so libFuzzer falls back to its byte mutations (the
// baseline of bench/mutator-vs-bytes.sh).
#ifndef R3FUZZ_PLAIN_MUTATION

#include <cstddef>
#include <cstdint>

#include <cstdlib>

#include "fuzz/libfuzzer/differential.hpp"
#include "fuzz/libfuzzer/mutator.hpp"

namespace {

// R3FUZZ_PROFILE, read once; LLVMFuzzerInitialize has already refused a bad value.
r3::Profile active_profile() {
  static const r3::Profile profile = [] {
    auto parsed = r3::profile_from_env([](const char* name) { return std::getenv(name); });
    return parsed ? *parsed : r3::kDefaultProfile;
  }();
  return profile;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return r3::mutate_bytes(data, size, max_size, seed, r3::concrete_binary_limits(), active_profile());
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                                            uint8_t* out, size_t max_out_size, unsigned int seed) {
  return r3::cross_over_bytes({data1, size1}, {data2, size2}, out, max_out_size, seed, r3::concrete_binary_limits(),
                              active_profile());
}

#endif  // R3FUZZ_PLAIN_MUTATION
