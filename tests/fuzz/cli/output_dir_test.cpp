#include "fuzz/cli/output_dir.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/scratch_dir.hpp"

namespace r3 {
namespace {

namespace fs = std::filesystem;

std::string message(const Status& s) { return s.ok() ? "ok" : s.error().message; }

TEST(CheckOutputFile, AFreeNameOrARegularFileInAnExistingFolderIsOk) {
  const test::ScratchDir dir("r3fuzz-output-file");
  const std::string free = (dir.path() / "r.xml").string();
  EXPECT_EQ(message(check_output_file("--junit", free)), "ok");
  EXPECT_FALSE(fs::exists(free));  // nothing is left behind by the probe
  EXPECT_EQ(message(check_output_file("--junit", dir.write("old.xml", "x").string())), "ok");
}

TEST(CheckOutputFile, EachBadPathIsRefusedNamingTheFlagAndThePath) {
  const test::ScratchDir dir("r3fuzz-output-file");
  const std::string d = dir.path().string();
  EXPECT_EQ(message(check_output_file("--junit", d + "/missing/r.xml")),
            "--junit " + d + "/missing/r.xml: no such folder: " + d + "/missing");
  EXPECT_EQ(message(check_output_file("--junit", d)), "--junit " + d + ": is a directory, not a file");
  const std::string file = dir.write("file", "x").string();
  EXPECT_EQ(message(check_output_file("--markdown", file + "/m.md")),
            "--markdown " + file + "/m.md: " + file + " is not a directory");
  ASSERT_EQ(mkfifo((dir.path() / "fifo").c_str(), 0644), 0);
  EXPECT_EQ(message(check_output_file("--junit", d + "/fifo")),
            "--junit " + d + "/fifo: refusing to replace a FIFO (r3fuzz writes only regular files, each one new)");
  fs::create_symlink("old.xml", dir.path() / "link");
  EXPECT_EQ(message(check_output_file("--junit", d + "/link")),
            "--junit " + d + "/link: refusing to replace a symbolic link (r3fuzz writes only regular files, each one new)");
  EXPECT_EQ(message(check_output_file("--junit", "")), "--junit: empty path");
}

}  // namespace
}  // namespace r3
