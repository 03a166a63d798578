// End-to-end tests that hold r3fuzz to a memory budget run it under `ulimit -v` (a cap on address
// space, as the hostile-input issues measured it). AddressSanitizer reserves terabytes of address
// space for its shadow, so under it the cap is left off and only the exit code and output are held.
#pragma once

#include <cstdint>
#include <string>

namespace r3::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// "ulimit -v KILOBYTES && " for a shell command line, or "" under AddressSanitizer.
inline std::string memory_cap_prefix(int64_t kilobytes = 4000000) {
  return kAddressSanitizer ? std::string() : "ulimit -v " + std::to_string(kilobytes) + " && ";
}

}  // namespace r3::test
