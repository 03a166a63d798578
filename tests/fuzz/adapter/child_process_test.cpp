// The transport: lines in and out of a real /bin/sh child, deadlines, EOF and exit status,
// and that a kill takes the whole process group down.
#include "fuzz/adapter/child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <thread>

namespace r3 {
namespace {

Deadline soon(int ms = 2000) { return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms); }

TEST(ChildProcess, EchoesLinesThroughCat) {
  auto child = ChildProcess::start("cat", "");
  ASSERT_TRUE(child.ok()) << child.error().message;
  ASSERT_TRUE(child->write_all("one\ntwo\n", soon()).ok());
  auto a = child->read_line(soon(), 100);
  auto b = child->read_line(soon(), 100);
  EXPECT_EQ(a.kind, ChildProcess::Line::Kind::line);
  EXPECT_EQ(a.text, "one");
  EXPECT_EQ(b.text, "two");
}

TEST(ChildProcess, ReportsTimeoutWithWhatArrived) {
  auto child = ChildProcess::start("printf 'half'; sleep 30", "");
  ASSERT_TRUE(child.ok());
  auto line = child->read_line(soon(200), 100);
  EXPECT_EQ(line.kind, ChildProcess::Line::Kind::timeout);
  EXPECT_EQ(line.text, "half");
}

TEST(ChildProcess, ReportsEofAndExitStatus) {
  auto child = ChildProcess::start("printf 'last'; exit 7", "");
  ASSERT_TRUE(child.ok());
  auto line = child->read_line(soon(), 100);
  EXPECT_EQ(line.kind, ChildProcess::Line::Kind::eof);
  EXPECT_EQ(line.text, "last");
  EXPECT_EQ(child->wait_for_exit(std::chrono::milliseconds(2000)).value_or("running"), "exited with status 7");
  EXPECT_FALSE(child->running());
}

TEST(ChildProcess, ReportsASignalledChild) {
  auto child = ChildProcess::start("kill -9 $$", "");
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(child->read_line(soon(), 100).kind, ChildProcess::Line::Kind::eof);
  EXPECT_EQ(child->wait_for_exit(std::chrono::milliseconds(2000)).value_or("running"), "was killed by signal 9 (Killed)");
}

TEST(ChildProcess, AChildThatKeepsRunningIsKilled) {
  auto child = ChildProcess::start("exec >&-; sleep 60", "");
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(child->read_line(soon(), 100).kind, ChildProcess::Line::Kind::eof);
  EXPECT_EQ(child->wait_for_exit(std::chrono::milliseconds(50)), std::nullopt);
  EXPECT_FALSE(child->running());
}

TEST(ChildProcess, CutsOverlongLines) {
  auto child = ChildProcess::start("printf '0123456789\\n'", "");
  ASSERT_TRUE(child.ok());
  auto line = child->read_line(soon(), 4);
  EXPECT_EQ(line.kind, ChildProcess::Line::Kind::too_long);
  EXPECT_EQ(line.text, "0123");
}

TEST(ChildProcess, WritingToADeadChildIsAnErrorNotSIGPIPE) {
  auto child = ChildProcess::start("exit 0", "");
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(child->read_line(soon(), 10).kind, ChildProcess::Line::Kind::eof);
  const std::string big(1 << 20, 'x');
  const Status s = child->write_all(big, soon());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "the adapter closed its stdin");
}

TEST(ChildProcess, KillTakesTheWholeProcessGroup) {
  // The shell starts a background grandchild and reports its pid; killing the child must end it.
  auto child = ChildProcess::start("sleep 60 & echo $!; wait", "");
  ASSERT_TRUE(child.ok());
  auto line = child->read_line(soon(), 100);
  ASSERT_EQ(line.kind, ChildProcess::Line::Kind::line);
  const pid_t grandchild = static_cast<pid_t>(std::stol(line.text));
  child->kill_and_reap();
  EXPECT_FALSE(child->running());
  // The grandchild is now a zombie of init or gone; either way it cannot take signal 0 for long.
  for (int i = 0; i < 200 && ::kill(grandchild, 0) == 0; ++i) ::usleep(10000);
  EXPECT_NE(::kill(grandchild, 0), 0);
  EXPECT_EQ(errno, ESRCH);
}

// Ctrl-C must not wait out an adapter's timeout: with a stop flag, a wait ends within a slice
// of the flag being set (issue 15, item 4).
TEST(ChildProcess, AStopFlagEndsAWaitWithinASlice) {
  std::atomic<bool> stop{false};
  auto child = ChildProcess::start("printf 'half'; sleep 60", "", &stop);
  ASSERT_TRUE(child.ok());
  std::thread signal_soon([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  auto line = child->read_line(soon(20000), 100);
  const auto waited = std::chrono::steady_clock::now() - start;
  signal_soon.join();
  EXPECT_EQ(line.kind, ChildProcess::Line::Kind::interrupted);
  EXPECT_EQ(line.text, "half");
  EXPECT_LT(waited, std::chrono::milliseconds(100) + 4 * ChildProcess::kStopPollSlice);
}

// A shell that exits leaves what it started in its group; reaping it kills them (issue 15, item 5).
TEST(ChildProcess, WaitForExitKillsWhatTheShellLeftBehind) {
  auto child = ChildProcess::start("sleep 60 & echo $!; exit 3", "");
  ASSERT_TRUE(child.ok());
  auto line = child->read_line(soon(), 100);
  ASSERT_EQ(line.kind, ChildProcess::Line::Kind::line);
  const pid_t grandchild = static_cast<pid_t>(std::stol(line.text));
  EXPECT_EQ(child->wait_for_exit(std::chrono::milliseconds(2000)).value_or("running"), "exited with status 3");
  for (int i = 0; i < 200 && ::kill(grandchild, 0) == 0; ++i) ::usleep(10000);
  EXPECT_NE(::kill(grandchild, 0), 0);
}

}  // namespace
}  // namespace r3
