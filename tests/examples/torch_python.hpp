// The Python with torch and pytest that the example tests run engine code with (found at configure
// time: tests/examples/CMakeLists.txt), and the rule for when there is none: skip with the reason,
// or fail when R3FUZZ_REQUIRE_TORCH=1 (test.sh and CI set it: there, a skipped torch test would
// hide that the engine code never ran).
#pragma once

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace r3::test {

inline std::string torch_python() { return R3FUZZ_TORCH_PYTHON; }

inline bool torch_required() {
  const char* v = std::getenv("R3FUZZ_REQUIRE_TORCH");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace r3::test

#define R3FUZZ_NEED_TORCH()                                                                                       \
  do {                                                                                                            \
    if (::r3::test::torch_python().empty()) {                                                                     \
      if (::r3::test::torch_required()) FAIL() << "R3FUZZ_REQUIRE_TORCH=1, but no python imports torch and pytest"; \
      GTEST_SKIP() << "no python imports torch and pytest (install python3-torch python3-pytest, re-configure)";   \
    }                                                                                                             \
  } while (0)
