#include "fuzz/io/output_path.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.hpp"

namespace r3 {
namespace {

namespace fs = std::filesystem;

TEST(OutputPath, SafeNames) {
  EXPECT_TRUE(check_safe_name("deepseek-v3_dp8.v1", "name").ok());
  EXPECT_EQ(check_safe_name("", "name").error().message, "name: empty (it names the files r3fuzz writes)");
  EXPECT_EQ(check_safe_name("a..b", "name").error().message, "name: \"..\" is not allowed (it names the files r3fuzz writes)");
  EXPECT_FALSE(check_safe_name("../escaped", "name").ok());
  EXPECT_FALSE(check_safe_name("/tmp/abs", "name").ok());
  EXPECT_FALSE(check_safe_name("a b", "name").ok());
  EXPECT_TRUE(check_safe_name(std::string(kMaxDataNameLength, 'a'), "name").ok());
  EXPECT_EQ(check_safe_name(std::string(kMaxDataNameLength + 1, 'a'), "name").error().message,
            "name: 101 characters, at most 100 allowed (it names the files r3fuzz writes)");
}

TEST(OutputPath, FileNamesFromTextFitAndStayDistinct) {
  EXPECT_EQ(file_name_from_text("external:python3 a.py/wrong_rows", ".json"), "external-python3-a.py-wrong_rows.json");
  EXPECT_EQ(file_name_from_text("..", ".json"), "-...json");
  const std::string a = file_name_from_text("external:" + std::string(300, 'x') + "a", ".json");
  const std::string b = file_name_from_text("external:" + std::string(300, 'x') + "b", ".json");
  EXPECT_EQ(a.size(), kMaxDataNameLength + 5);
  EXPECT_NE(a, b);
}

TEST(OutputPath, OnlyInsideTheFolder) {
  const test::ScratchDir dir("r3fuzz-output-path");
  EXPECT_EQ(*output_path_inside(dir.path(), "x.json"), dir.path() / "x.json");
  for (const std::string bad : {"../x.json", "/tmp/x.json", "a/b.json", "..", ".", ""})
    EXPECT_FALSE(output_path_inside(dir.path(), bad).ok()) << bad;
  fs::create_symlink("/tmp/elsewhere.json", dir.path() / "link.json");
  EXPECT_EQ(output_path_inside(dir.path(), "link.json").error().message,
            (dir.path() / "link.json").string() + ": refusing to write through a symbolic link");
}

}  // namespace
}  // namespace r3
