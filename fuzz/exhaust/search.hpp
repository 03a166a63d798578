// The exhaustive search: every case of the bounded space (case_space.hpp) checked in parallel,
// with a result that does not depend on thread timing: the smallest counterexample in the
// space's total order, or the number of cases checked.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "fuzz/exhaust/bounds.hpp"
#include "reference/case.hpp"
#include "reference/layout.hpp"

namespace r3 {

// Checks one case: nullopt when the subject agrees with what it is compared against, else
// the difference in words. Called from several threads at once: it must be re-entrant.
using CaseCheck = std::function<std::optional<std::string>(const Case& c, const Step& step)>;

struct Counterexample {
  Case c;
  std::string detail;
  int64_t position = 0;  // 0-based position of the case in the total order
};

struct ExhaustReport {
  int64_t cases = 0;     // cases checked: all of them, or up to and including the counterexample
  int64_t invalid = 0;   // enumerated combinations validate() refused (not checked, not counted)
  std::optional<Counterexample> counterexample;
  // The worker threads it ran on: options.jobs, or fewer when the system refused to start more
  // (its words in threads_refused). The result is the same for any number.
  int jobs = 0;
  std::optional<std::string> threads_refused;
  // A check that threw (its what()): the search stopped there and proves nothing; the rest of
  // the report is not to be read.
  std::optional<std::string> internal_error;
};

struct ExhaustProgress {
  int64_t cases_done = 0;
  int64_t units_done = 0;
  int64_t units = 0;
};

struct ExhaustOptions {
  int jobs = 1;  // worker threads asked for; ExhaustReport::jobs says how many ran
  // Called about five times a second from the calling thread while workers run; may be empty.
  std::function<void(const ExhaustProgress&)> progress;
};

ExhaustReport exhaust_search(const ExhaustBounds& bounds, const CaseCheck& check, const ExhaustOptions& options);

}  // namespace r3
