// The exported pytest module of one trace: its data (every request's tokens, every row the
// trace's forwards compute, what each finished request must return), the route hash that turns
// those into expert ids, the engine's data lines and harness (trace_target.hpp), and one test per
// finished request. Self-contained: torch and pytest only, no r3fuzz needed to run it.
#pragma once

#include <string>

#include "fuzz/export/pytest_writer.hpp"
#include "reference/error.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

// The module text; an error when the trace is invalid, or its engine has no trace export part or
// cannot drive something the trace does. `how.case_file` is the trace file as named.
Result<std::string> trace_pytest_module(const Trace& t, const PytestExport& how);

}  // namespace r3
