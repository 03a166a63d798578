// r3fuzz run --traces: the trace campaign (fuzz/campaign/trace_campaign.hpp) from run's flags.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/cli/commands.hpp"
#include "reference/engine.hpp"

namespace r3 {

struct RunTracesFlags {
  std::vector<std::string> impls;
  uint64_t seed = 1;
  double seconds = 0;
  int64_t traces = 0;  // --cases N: N traces
  std::string out;
  bool json = false;
  std::string junit;
  bool timing = false;
  bool no_shrink = false;
  Profile profile = kDefaultProfile;
  int jobs = 1;
  std::vector<std::string> case_only_flags;  // flags given that only case campaigns take
};

// The exit code (0 clean, 1 findings); usage errors go to `outcome`.
int run_traces(const RunTracesFlags& flags, CommandOutcome& outcome);

}  // namespace r3
