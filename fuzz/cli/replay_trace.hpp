// r3fuzz replay on a trace file (format r3fuzz-trace/1): each implementation judged over the
// whole trace, checked against the file's "expect" as for cases (docs/SECURITY.md, 'What
// "expect" means under --impl': an implementation the file does not name must pass).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "fuzz/campaign/junit.hpp"

namespace r3 {

// True when the file holds a JSON object whose "format" is r3fuzz-trace/1.
bool is_trace_file(const std::string& path);

struct TraceReplay {
  std::string bad;  // why the file could not be replayed ("" when it was)
  int checked = 0;
  int unexpected = 0;
  std::vector<JunitCase> cases;
};

// Judges the trace in `file` with `impls` (default: its expect.impl, else the released versions
// of its engine), printing a line per implementation on `out`.
TraceReplay replay_trace_file(const std::string& file, const std::vector<std::string>& impls,
                              const std::string& program, std::ostream& out);

}  // namespace r3
