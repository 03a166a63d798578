// The exported pytest module of one case: its data (every capture call's inputs per rank, the
// rows the reference expects, the buffer sizes each sizing allocates) followed by the engine's
// harness (engine_target.hpp). Self-contained: torch and pytest only, no r3fuzz needed to run it.
#pragma once

#include <string>

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

struct PytestExport {
  std::string case_file;       // as named on the command line, shown in the file
  std::string capturer;        // MODULE:CLASS; empty: the engine's real capturer
  std::string export_command;  // the command that wrote the file, shown in the file
};

// The module text; an error when the case is invalid or too large to give every row its own
// int32 value (the capture buffer is int32, as vLLM's is).
Result<std::string> pytest_module(const Case& c, const PytestExport& how);

}  // namespace r3
