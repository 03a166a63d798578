// How much work the slow property tests do. ./test.sh runs every test twice: in the default
// stage, where a test proves what it claims with its full budget, and again in the fuzz stage
// under ASan + UBSan (R3FUZZ_FUZZING), where the same work is several times slower and what is
// looked for is a memory or undefined-behaviour error on the paths the test drives. There a
// test takes its sanitizer budget: smaller, but chosen to drive the same paths (each test says
// why its budget still does). R3FUZZ_TEST_BUDGET=full or =sanitizer in the environment picks
// one explicitly (to run the full budget under sanitizers, or to try the small one anywhere).
#pragma once

#include <cstdlib>
#include <string_view>

namespace r3::test {

inline bool full_budget() {
  const char* chosen = std::getenv("R3FUZZ_TEST_BUDGET");
  if (chosen && std::string_view(chosen) == "full") return true;
  if (chosen && std::string_view(chosen) == "sanitizer") return false;
#ifdef R3FUZZ_FUZZING
  return false;
#else
  return true;
#endif
}

// `full` in the default build, `sanitizer` under the sanitizers (or as R3FUZZ_TEST_BUDGET says).
template <class T>
T budget(T full, T sanitizer) {
  return full_budget() ? full : sanitizer;
}

}  // namespace r3::test
