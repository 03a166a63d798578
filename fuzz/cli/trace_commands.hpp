// explain and shrink on a trace file (format r3fuzz-trace/1): the commands call these when the
// file they are given is a trace (replay's is replay_trace.hpp).
#pragma once

#include <string>
#include <vector>

#include "fuzz/cli/commands.hpp"
#include "reference/error.hpp"

namespace r3 {

// The trace's timeline, then each implementation's judgement of it (default: every version of
// its engine, released and fixed). Exit 0 whatever the verdicts: explain describes.
// `json`: the explanation as one JSON document (trace_explain_json.hpp) instead of text.
Status explain_trace_command(const std::string& path, const std::vector<std::string>& impls, bool json = false);

// Shrinks the failing trace for `impl` (default: its expect.impl) to the smallest trace with the
// same verdict and root cause, and writes it as STEM.min.json under `out` (default: the input's
// folder), with an "expect" that replays it. Exit 0, or 2 on an input error (in `outcome`).
int shrink_trace_command(const std::string& path, const std::string& impl, const std::string& out, int max_attempts,
                         CommandOutcome& outcome);

}  // namespace r3
