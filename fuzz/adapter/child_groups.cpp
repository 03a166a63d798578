#include "fuzz/adapter/child_groups.hpp"

#include <signal.h>

#include <atomic>

namespace r3 {
namespace {

constexpr int kSlots = 256;
std::atomic<pid_t> g_groups[kSlots];  // 0: free
static_assert(std::atomic<pid_t>::is_always_lock_free, "a signal handler reads this table");

}  // namespace

void remember_child_group(pid_t group) noexcept {
  for (std::atomic<pid_t>& slot : g_groups) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, group)) return;
  }
}

void forget_child_group(pid_t group) noexcept {
  for (std::atomic<pid_t>& slot : g_groups) {
    pid_t mine = group;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

void kill_child_groups() noexcept {
  for (std::atomic<pid_t>& slot : g_groups) {
    const pid_t group = slot.load();
    if (group > 0) ::kill(-group, SIGKILL);
  }
}

}  // namespace r3
