// A child process spoken to over pipes, one line at a time, with deadlines: the transport
// of the adapter protocol. The command runs through /bin/sh -c in its own process group,
// so killing it also kills whatever the shell started. Nothing here blocks past a deadline.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "reference/error.hpp"

namespace r3 {

using Deadline = std::chrono::steady_clock::time_point;

class ChildProcess {
 public:
  // Starts `command` via /bin/sh -c with its stdin and stdout on pipes. stderr goes to
  // `stderr_log` (opened for appending) or, when empty, to r3fuzz's own stderr. Also makes
  // SIGPIPE ignored process-wide, so writing to a dead child is an error, not a signal.
  // While `stop` (when given) is set, waits on the pipes end within kStopPollSlice with
  // Line::Kind::interrupted: Ctrl-C must not wait out an adapter's timeout.
  static Result<ChildProcess> start(const std::string& command, const std::string& stderr_log,
                                    const std::atomic<bool>* stop = nullptr);
  static constexpr std::chrono::milliseconds kStopPollSlice{50};

  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // kills and reaps the child

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Writes all of `bytes` to the child's stdin before `deadline`.
  Status write_all(std::string_view bytes, Deadline deadline);

  struct Line {
    enum class Kind { line, timeout, eof, too_long, interrupted };
    Kind kind = Kind::line;
    std::string text;  // the line without its '\n'; on eof/timeout/too_long what had arrived
  };
  // Reads one line of at most `max_bytes` bytes from the child's stdout before `deadline`.
  Line read_line(Deadline deadline, size_t max_bytes);

  // How the child ended ("exited with status 3", "was killed by signal 9 (Killed)"), waiting
  // up to `grace` for it to exit; nullopt when it was still running (it is killed then).
  // Reaps the child either way.
  std::optional<std::string> wait_for_exit(std::chrono::milliseconds grace);

  // Kills the whole process group and reaps the child; a no-op when none is running.
  void kill_and_reap();

 private:
  void close_pipes();
  // waitpid(pid), then the descendants that escaped the group (fuzz/adapter/descendants.hpp); the wait status.
  static int reap(pid_t pid);
  bool stopping() const { return stop_ && stop_->load(std::memory_order_relaxed); }
  int poll_millis(Deadline deadline) const;  // until the deadline, in slices when `stop_` is set
  pid_t pid_ = -1;
  const std::atomic<bool>* stop_ = nullptr;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string pending_;  // bytes read past the last returned line
};

// "exited with status 3", "was killed by signal 9 (Killed)".
std::string describe_wait_status(int status);

}  // namespace r3
