#include "fuzz/cli/stop_signals.hpp"

#include <signal.h>

#include "fuzz/adapter/child_groups.hpp"
#include "fuzz/adapter/descendants.hpp"

namespace r3 {
namespace {

// A signal handler can reach only globals; both are lock-free atomics.
std::atomic<bool> g_stop_requested{false};
std::atomic<bool> g_stop_cleanly{false};  // a StopOnSignals is alive

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void on_stop_signal(int sig) {
  if (g_stop_cleanly.load() && !g_stop_requested.exchange(true)) return;
  kill_child_groups();
  kill_children_before_dying();  // what left a group (setsid) and re-parented to r3fuzz goes too
  // Default action, delivered when the handler returns (the signal is blocked until then).
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void install_signal_cleanup() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : kStopSignals) sigaddset(&action.sa_mask, sig);
  for (int sig : kStopSignals) {
    // A signal ignored when r3fuzz started (nohup, a background job's SIGINT) stays ignored.
    struct sigaction previous {};
    sigaction(sig, nullptr, &previous);
    if (previous.sa_handler != SIG_IGN) sigaction(sig, &action, nullptr);
  }
}

StopOnSignals::StopOnSignals() {
  g_stop_requested = false;
  g_stop_cleanly = true;
}

StopOnSignals::~StopOnSignals() { g_stop_cleanly = false; }

const std::atomic<bool>* StopOnSignals::flag() const { return &g_stop_requested; }

}  // namespace r3
