// libFuzzer's differential target: bytes -> binary case (rejected inputs return -1 so libFuzzer
// does not keep them) -> every selected implementation judged beside the reference. A failing
// verdict prints `r3fuzz run`'s report and the case as JSON, then aborts, so every crash
// artifact explains itself. Configuration: see differential.hpp (environment variables).
// An input judged before is answered from memory (judged_inputs.hpp); at exit the target says
// how many inputs it judged and how many repeats it answered so.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <span>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/libfuzzer/differential.hpp"
#include "fuzz/libfuzzer/judged_inputs.hpp"

namespace {

const r3::DifferentialRunner& runner() {
  static const r3::DifferentialRunner instance = [] {
    auto config = r3::differential_config_from_env([](const char* name) { return std::getenv(name); });
    if (!config) {
      std::fprintf(stderr, "r3fuzz differential target: error: %s\n", config.error().message.c_str());
      std::exit(2);
    }
    auto made = r3::DifferentialRunner::create(*config);
    if (!made) {
      std::fprintf(stderr, "r3fuzz differential target: error: %s\n", made.error().message.c_str());
      std::exit(2);
    }
    std::string names;
    for (const auto& impl : made->implementations()) names += (names.empty() ? "" : ", ") + impl->name();
    std::fprintf(stderr, "r3fuzz differential target: implementations %s; %zu known signature(s)%s\n",
                 names.c_str(), made->known().size(), config->strict ? "; strict" : "");
    return std::move(*made);
  }();
  return instance;
}

// 2^16 inputs in 2 MiB: a minute or more of fuzzing before it starts over. Larger tables cost
// every start more than they save (ASan faults in and clears each page at startup, and the
// time to kill a fault, bench/mutator-vs-bytes.sh, is mostly startup).
r3::JudgedInputs& judged() {
  static r3::JudgedInputs inputs(size_t{1} << 16, size_t{2} << 20);
  return inputs;
}

size_t judged_count = 0;
size_t repeat_count = 0;

void print_judged_counts() {
  std::fprintf(stderr, "r3fuzz differential target: %zu inputs judged, %zu repeats answered from memory\n",
               judged_count, repeat_count);
}

int judge_input(std::span<const uint8_t> input) {
  // The same decoding as `r3fuzz shrink --from-bytes` and `seed --to-json`, so a crash file means
  // one case everywhere; cases beyond the concrete limits (unmutated production seeds) are not run.
  auto c = r3::case_from_fuzz_input(input);
  if (!c || !r3::fits_binary_limits(*c, r3::concrete_binary_limits())) return -1;
  const r3::DifferentialVerdict verdict = runner().run(*c);
  if (verdict.skipped) return -1;  // not judged: keep it out of the corpus
  static std::set<r3::Signature> reported_known;
  for (const r3::Signature& s : verdict.known_hits) {
    if (reported_known.insert(s).second) {
      std::fprintf(stderr, "r3fuzz differential target: known finding, not aborting: %s\n", s.text().c_str());
    }
  }
  if (!verdict.abort) return 0;
  std::fputs(verdict.report.c_str(), stderr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  runner();
  judged();
  std::atexit(print_judged_counts);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  if (const auto result = judged().find(input)) {
    ++repeat_count;
    return *result;
  }
  ++judged_count;
  const int result = judge_input(input);
  judged().remember(input, result);
  return result;
}
