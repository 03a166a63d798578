#include "fuzz/adapter/descendants.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
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

// The parent pid in a /proc/PID/stat text, or -1; no library call (a signal handler uses it).
pid_t parent_in_stat(const char* text, ssize_t n) {
  ssize_t close = -1;
  for (ssize_t i = 0; i < n; ++i)
    if (text[i] == ')') close = i;
  if (close < 0 || close + 4 >= n) return -1;
  ssize_t i = close + 4;  // past ") S "
  pid_t ppid = 0;
  for (; i < n && text[i] >= '0' && text[i] <= '9'; ++i) ppid = ppid * 10 + (text[i] - '0');
  return ppid;
}

// One pass over /proc with raw system calls: SIGKILL and reap (WNOHANG) every child. Whether
// there was one.
bool kill_children_once(pid_t self) noexcept {
  const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return false;
  bool any = false;
  alignas(8) char entries[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, proc, entries, sizeof entries);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      struct Entry {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* e = reinterpret_cast<const Entry*>(entries + at);
      at += e->reclen;
      pid_t pid = 0;
      const char* c = e->name;
      for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      if (*c != '\0' || pid <= 0) continue;
      char path[32] = "/proc/";
      size_t len = 6;
      for (const char* d = e->name; *d && len < sizeof path - 6; ++d) path[len++] = *d;
      for (const char* d = "/stat"; *d; ++d) path[len++] = *d;
      path[len] = '\0';
      const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char stat[512];
      const ssize_t got = ::read(fd, stat, sizeof stat);
      ::close(fd);
      if (parent_in_stat(stat, got) != self) continue;
      any = true;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, WNOHANG);
    }
  }
  ::close(proc);
  return any;
}

}  // namespace

void kill_children_before_dying() noexcept {
  if (!g_subreaper.load()) return;
  const pid_t self = ::getpid();
  for (int pass = 0; pass < 200 && kill_children_once(self); ++pass) {
    const timespec millisecond{0, 1000000};
    ::nanosleep(&millisecond, nullptr);
  }
}

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
