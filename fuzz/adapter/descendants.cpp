#include "fuzz/adapter/descendants.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace r3 {
namespace {

std::atomic<bool> g_subreaper{false};
std::mutex g_table_mutex;
std::set<pid_t> g_running;  // adapters started and not yet reaped; under g_table_mutex

// The parent pid in /proc/PID/stat: the field after the command name, which is in parentheses
// and may itself hold spaces and parentheses, so the last ')' ends it.
pid_t parent_of(const char* pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/stat", pid);
  FILE* file = std::fopen(path, "re");
  if (!file) return -1;
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, file);
  std::fclose(file);
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  if (!close) return -1;
  char state = 0;
  int ppid = -1;
  if (std::sscanf(close + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}

// Children of this process that are not running adapters.
std::vector<pid_t> escaped_children() {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  const pid_t self = ::getpid();
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    if (parent_of(entry->d_name) != self) continue;
    out.push_back(static_cast<pid_t>(std::atol(entry->d_name)));
  }
  ::closedir(proc);
  std::lock_guard lock(g_table_mutex);
  std::erase_if(out, [](pid_t pid) { return g_running.count(pid) != 0; });
  return out;
}

}  // namespace

bool become_child_subreaper() {
  const bool ok = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
  g_subreaper = ok;
  return ok;
}

std::unique_lock<std::mutex> lock_adapter_table() { return std::unique_lock(g_table_mutex); }
void add_running_adapter(pid_t pid) { g_running.insert(pid); }
void remove_running_adapter(pid_t pid) { g_running.erase(pid); }

void reap_escaped_descendants(pid_t group) {
  if (!g_subreaper.load()) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    // Members of the killed group may still be exiting; their children re-parent as they go.
    const bool group_left = ::kill(-group, 0) == 0;
    const std::vector<pid_t> escaped = escaped_children();
    for (pid_t pid : escaped) ::kill(pid, SIGKILL);
    for (pid_t pid : escaped) ::waitpid(pid, nullptr, WNOHANG);  // a zombie now, or on the next pass
    if (!group_left && escaped.empty()) return;
    if (std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace r3
