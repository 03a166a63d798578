#include "fuzz/io/new_file.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include <gtest/gtest.h>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace r3 {
namespace {

namespace fs = std::filesystem;

TEST(NewFile, WritesAFileAndLeavesNoTemporaryBehind) {
  const test::ScratchDir dir("r3fuzz-new-file");
  const fs::path path = dir.path() / "out.json";
  ASSERT_TRUE(write_new_file(path.string(), "bytes\n").ok());
  EXPECT_EQ(test::read_file_bytes(path), "bytes\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::owner_write, fs::perms::owner_write);
}

TEST(NewFile, AHardLinkIsReplacedAndItsTargetKeepsItsBytes) {
  const test::ScratchDir dir("r3fuzz-new-file");
  const fs::path victim = dir.write("victim", "victim\n");
  fs::create_hard_link(victim, dir.path() / "link");
  ASSERT_TRUE(write_new_file((dir.path() / "link").string(), "new\n").ok());
  EXPECT_EQ(test::read_file_bytes(victim), "victim\n");
  EXPECT_EQ(test::read_file_bytes(dir.path() / "link"), "new\n");
  EXPECT_EQ(fs::hard_link_count(victim), 1u);
}

TEST(NewFile, RefusesWhatIsNoRegularFile) {
  const test::ScratchDir dir("r3fuzz-new-file");
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const Status s = write_new_file(fifo.string(), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, fifo.string() + ": refusing to replace a FIFO (r3fuzz writes only regular files, each one new)");
  fs::create_symlink("elsewhere", dir.path() / "link");
  EXPECT_NE(write_new_file((dir.path() / "link").string(), "x").error().message.find("a symbolic link"),
            std::string::npos);
  const Status full = write_new_file("/dev/full", "x");
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().message, "/dev/full: refusing to replace a character device (r3fuzz writes only regular files, each one new)");
}

// A write that fails part way (here EFBIG under RLIMIT_FSIZE, as ENOSPC on a full disk) is an
// error; the earlier file stays as it was and no temporary is left.
TEST(NewFile, AFailedWriteIsAnErrorAndLeavesTheEarlierFile) {
  const test::ScratchDir dir("r3fuzz-new-file");
  const fs::path path = dir.write("out.json", "earlier\n");
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const Status s = write_new_file(path.string(), std::string(4096, 'x'));
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, path.string() + ": cannot write: File too large");
  EXPECT_EQ(test::read_file_bytes(path), "earlier\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(NewFile, AFolderThatCannotBeWrittenIsAnErrorNamingThePath) {
  const Status s = write_new_file("/proc/r3fuzz-no-such-dir/out.json", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.error().message.starts_with("/proc/r3fuzz-no-such-dir/out.json: cannot open for writing: "))
      << s.error().message;
}

}  // namespace
}  // namespace r3
