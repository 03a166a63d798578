// The lifecycle fault-kill matrix (r3fuzz mutants --traces): each lifecycle fault
// (fuzz/oracle/lifecycle_fault.hpp) injected into each fixed lifecycle model of the profile,
// judged on generated traces until one fails (killed) or the budget runs out (survived). A
// survivor is either a blind spot of the generator or the oracle, or a fault no trace of the
// profile can show; the report says which traces it was judged on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/oracle/lifecycle_fault.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"

namespace r3 {

struct TraceMutantResult {
  std::string carrier;  // the fixed lifecycle version the fault was injected into
  LifecycleFault fault = LifecycleFault::shift_one;
  bool killed = false;
  int64_t traces = 0;      // judged until the kill, or the budget
  std::string verdict;     // the killing verdict
  std::string detail;      // and its detail
};

std::vector<TraceMutantResult> trace_kill_matrix(Profile profile, uint64_t seed, int64_t max_traces);

// One line per mutant, then "result: K of N lifecycle mutants killed".
std::string trace_kill_matrix_text(const std::vector<TraceMutantResult>& results);

}  // namespace r3
