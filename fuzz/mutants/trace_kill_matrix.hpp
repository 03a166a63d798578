// The lifecycle fault-kill matrix (r3fuzz mutants --traces): each lifecycle fault
// (fuzz/oracle/lifecycle_fault.hpp) injected into each fixed lifecycle model of the profile,
// judged on generated traces until one fails (killed) or the budget runs out (survived). A
// survivor is either a blind spot of the generator or the oracle, or a fault no trace of the
// profile can show; the report says which traces it was judged on. A copy-order fault
// (all_copy_faults) the drawn traces leave alive is then searched for in every tiny trace under
// overlap scheduling and every completion order the engine allows (trace_space.hpp, copy_orders,
// kCopyProofBounds): killed there, or equivalent within those bounds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/exhaust/trace_space.hpp"
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
  // Copy-order faults only: the bounded search after the drawn traces (killed there when it found
  // a counterexample; else equivalent within kCopyProofBounds).
  bool exhausted = false;
  bool equivalent = false;
  int64_t exhaust_judged = 0;  // traces and completion orders judged by it
};

inline constexpr TraceSpaceBounds kCopyProofBounds{2, 3, 2, 2, true};

std::vector<TraceMutantResult> trace_kill_matrix(Profile profile, uint64_t seed, int64_t max_traces);

// One line per mutant, then "result: K of N lifecycle mutants killed" for the five faults of how
// rows are kept, and "result: K of N copy-order mutants killed, E equivalent within bounds".
std::string trace_kill_matrix_text(const std::vector<TraceMutantResult>& results);

}  // namespace r3
