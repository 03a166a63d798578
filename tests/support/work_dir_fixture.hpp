// A fixture that runs the r3fuzz binary through the shell with a working directory of its own
// (`work/` in a scratch directory), so relative paths in a command line and anything a file
// smuggled in land where the test can look. Stdout and stderr are captured beside it.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace r3::test {

class WorkDirFixture : public ::testing::Test {
 protected:
  explicit WorkDirFixture(std::string scratch_name) : scratch_(std::move(scratch_name)) {}

  // Runs r3fuzz with `args` appended as written (the caller shell-quotes), from work_.
  BinaryRun run(const std::string& args) {
    const std::string cmd = "cd '" + work_.string() + "' && '" + std::string(R3FUZZ_BINARY) + "' " + args + " >'" +
                            (dir_ / "stdout").string() + "' 2>'" + (dir_ / "stderr").string() + "'";
    return captured_run(exit_code_of_wait_status(std::system(cmd.c_str())), dir_);
  }
  std::filesystem::path write(const std::string& name, const std::string& text) {
    std::filesystem::create_directories((work_ / name).parent_path());
    return scratch_.write((std::filesystem::path("work") / name).string(), text);
  }
  void SetUp() override { std::filesystem::create_directories(work_); }

  const ScratchDir scratch_;
  const std::filesystem::path dir_ = scratch_.path();
  const std::filesystem::path work_ = dir_ / "work";
};

}  // namespace r3::test
