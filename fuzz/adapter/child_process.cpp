#include "fuzz/adapter/child_process.hpp"

#include "fuzz/adapter/child_groups.hpp"
#include "fuzz/adapter/descendants.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

extern char** environ;

namespace r3 {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

int millis_until(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
}

void ignore_sigpipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = SIG_IGN;
    sigemptyset(&action.sa_mask);
    sigaction(SIGPIPE, &action, nullptr);
  });
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The adapter's stderr log is opened by the child, between its start and its exec, and
// posix_spawn waits for that: a FIFO there without a reader would block r3fuzz itself, forever.
// A FIFO, socket or directory at the name (or behind a symbolic link there) is refused before
// the child starts, as write_new_file refuses one (docs/SECURITY.md, "One write path"); a
// missing name is created by the open, a device such as /dev/null is appended to.
Status check_append_log(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ok_status();
  const char* kind = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : S_ISDIR(st.st_mode) ? "a directory" : nullptr;
  if (kind != nullptr) return Error{"--adapter-log " + path + ": refusing to append to " + kind};
  return ok_status();
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
  }
  return "ended with wait status " + std::to_string(status);
}

Result<ChildProcess> ChildProcess::start(const std::string& command, const std::string& stderr_log,
                                         const std::atomic<bool>* stop) {
  ignore_sigpipe();
  if (!stderr_log.empty()) R3_TRY_STATUS(check_append_log(stderr_log));
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return Error{errno_text("pipe")};
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return Error{errno_text("pipe")};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  if (!stderr_log.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_log.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: a kill reaches the shell and whatever it started. Default
  // signal dispositions: the child must not inherit our ignored SIGPIPE.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  std::string shell_command = command;
  char sh[] = "/bin/sh", dash_c[] = "-c";
  char* argv[] = {sh, dash_c, shell_command.data(), nullptr};
  pid_t pid = -1;
  // Recorded as a running adapter before another thread's sweep can see it as a stray child.
  std::unique_lock table = lock_adapter_table();
  const int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, environ);
  if (rc == 0) add_running_adapter(pid);
  table.unlock();
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  if (rc != 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    return Error{std::string("cannot start /bin/sh -c '") + command + "': " + std::strerror(rc)};
  }
  remember_child_group(pid);  // its group id is its pid (setpgroup 0)
  ChildProcess child;
  child.pid_ = pid;
  child.stop_ = stop;
  child.to_child_ = in_pipe[1];
  child.from_child_ = out_pipe[0];
  fcntl(child.to_child_, F_SETFL, fcntl(child.to_child_, F_GETFL) | O_NONBLOCK);
  fcntl(child.from_child_, F_SETFL, fcntl(child.from_child_, F_GETFL) | O_NONBLOCK);
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    to_child_ = std::exchange(other.to_child_, -1);
    from_child_ = std::exchange(other.from_child_, -1);
    pending_ = std::move(other.pending_);
    stop_ = other.stop_;
  }
  return *this;
}

ChildProcess::~ChildProcess() { kill_and_reap(); }

void ChildProcess::close_pipes() {
  close_fd(to_child_);
  close_fd(from_child_);
  pending_.clear();
}

void ChildProcess::kill_and_reap() {
  close_pipes();
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  forget_child_group(pid_);  // before the reap frees the id for reuse
  reap(pid_);
  pid_ = -1;
}

int ChildProcess::reap(pid_t pid) {
  int status = 0;
  {
    const std::unique_lock table = lock_adapter_table();
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    remove_running_adapter(pid);
  }
  // A descendant that left the group (setsid) was re-parented to r3fuzz: killed and reaped too.
  reap_escaped_descendants(pid);
  return status;
}

int ChildProcess::poll_millis(Deadline deadline) const {
  const int left = millis_until(deadline);
  return stop_ ? std::min(left, static_cast<int>(kStopPollSlice.count())) : left;
}

Status ChildProcess::write_all(std::string_view bytes, Deadline deadline) {
  if (to_child_ < 0) return Error{"the adapter is not running"};
  while (!bytes.empty()) {
    const ssize_t n = ::write(to_child_, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) return Error{"the adapter closed its stdin"};
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Error{errno_text("write to the adapter")};
    if (stopping()) return Error{"interrupted"};
    pollfd p{to_child_, POLLOUT, 0};
    const int ready = ::poll(&p, 1, poll_millis(deadline));
    if (ready == 0 && std::chrono::steady_clock::now() < deadline) continue;  // a slice ended
    if (ready == 0) return Error{"the adapter stopped reading its stdin"};
    if (ready < 0 && errno != EINTR) return Error{errno_text("poll")};
    if (ready > 0 && (p.revents & (POLLERR | POLLHUP)) && !(p.revents & POLLOUT))
      return Error{"the adapter closed its stdin"};
  }
  return ok_status();
}

ChildProcess::Line ChildProcess::read_line(Deadline deadline, size_t max_bytes) {
  Line out;
  size_t scanned = 0;
  for (;;) {
    const size_t newline = pending_.find('\n', scanned);
    if (newline != std::string::npos && newline <= max_bytes) {
      out.text = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return out;
    }
    if (pending_.size() > max_bytes) {
      out.kind = Line::Kind::too_long;
      out.text = pending_.substr(0, max_bytes);
      pending_.clear();
      return out;
    }
    scanned = pending_.size();
    if (from_child_ < 0) {
      out.kind = Line::Kind::eof;
      out.text = std::move(pending_);
      pending_.clear();
      return out;
    }
    char buffer[65536];
    const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n > 0) {
      pending_.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      close_fd(from_child_);  // EOF (or a broken pipe): nothing more will come
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (stopping()) {
      out.kind = Line::Kind::interrupted;
      out.text = pending_;
      return out;
    }
    pollfd p{from_child_, POLLIN, 0};
    const int ready = ::poll(&p, 1, poll_millis(deadline));
    if (ready == 0 && std::chrono::steady_clock::now() < deadline) continue;  // a slice ended
    if (ready == 0) {
      out.kind = Line::Kind::timeout;
      out.text = pending_;
      return out;
    }
  }
}

std::optional<std::string> ChildProcess::wait_for_exit(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return std::nullopt;
  const Deadline deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    // WNOWAIT leaves the shell a zombie, so its group id cannot be reused while whatever it
    // started is killed; waitpid then reaps it.
    siginfo_t info{};
    const int rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && info.si_pid == pid_) {
      ::kill(-pid_, SIGKILL);
      forget_child_group(pid_);
      const int status = reap(pid_);
      pid_ = -1;
      close_pipes();
      return describe_wait_status(status);
    }
    if (rc < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill_and_reap();
  return std::nullopt;
}

}  // namespace r3
