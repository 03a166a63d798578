// What SIGINT, SIGTERM and SIGHUP do to r3fuzz. Every signal first kills the adapters'
// process groups (fuzz/adapter/child_groups.hpp), so no adapter outlives r3fuzz, then ends
// r3fuzz as the signal would: main() installs that for every command. A command that can
// stop cleanly (run: stop, print the summary, exit with its usual code) holds a StopOnSignals
// for as long as it runs: the first signal then only sets its flag, and a second one ends
// r3fuzz as above, for a user who does not want to wait.
#pragma once

#include <atomic>

namespace r3 {

void install_signal_cleanup();

class StopOnSignals {
 public:
  StopOnSignals();   // clears the flag
  ~StopOnSignals();  // back to install_signal_cleanup()'s handling
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  // Set by the first SIGINT, SIGTERM or SIGHUP; for CampaignHooks::stop and ExternalOptions::stop.
  const std::atomic<bool>* flag() const;
};

}  // namespace r3
