#include "fuzz/io/input_file.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.hpp"

namespace r3 {
namespace {

namespace fs = std::filesystem;

TEST(InputFile, ReadsARegularFileWhole) {
  const test::ScratchDir dir("r3fuzz-input-file");
  const fs::path p = dir.write("a.json", std::string("{}\n\0x", 5));
  auto text = read_input_file(p.string());
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text, std::string("{}\n\0x", 5));
}

TEST(InputFile, RefusesWhatIsNotARegularFileOrTooLarge) {
  const test::ScratchDir dir("r3fuzz-input-file");
  const std::string fifo = (dir.path() / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_input_file(fifo).error().message, fifo + ": not a regular file (a FIFO)");
  EXPECT_EQ(read_input_file("/dev/zero").error().message, "/dev/zero: not a regular file (a character device)");
  EXPECT_EQ(read_input_file(dir.path().string()).error().message, dir.path().string() + ": is a directory");
  const fs::path big = dir.write("big", std::string(11, 'x'));
  EXPECT_EQ(read_input_file(big.string(), 10).error().message, big.string() + ": too large: 11 bytes (the limit is 10 bytes)");
  EXPECT_TRUE(read_input_file(big.string(), 11).ok());
  const std::string missing = (dir.path() / "missing").string();
  EXPECT_EQ(read_input_file(missing).error().message, missing + ": cannot open: No such file or directory");
}

}  // namespace
}  // namespace r3
