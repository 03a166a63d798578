// End-to-end tests of where r3fuzz's output goes (issue 15, items 15 and 17): a write error on
// stdout is not a success, a bad --out is refused before any case runs, and the replay
// commands r3fuzz prints survive a paste into a shell when paths hold spaces or quotes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fuzz/campaign/shell_quote.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Ran = r3::test::BinaryRun;

class Output : public ::testing::Test {
 protected:
  Ran run(const std::vector<std::string>& args) { return r3::test::run_binary(R3FUZZ_BINARY, args, dir_); }

  fs::path a_case() const {
    return scratch_.write("case.json", R"({"format": "r3fuzz-case/1",
      "topology": {"dp": 2, "tp": 2, "ep": true, "sp": true}, "model": {"layers": 2, "top_k": 2, "experts": 64},
      "max_num_tokens": 4, "tokens": [2, 3], "padding": "none", "path": "sp_shard", "layer": 1})");
  }

  const r3::test::ScratchDir scratch_{"r3fuzz-output"};
  const fs::path dir_ = scratch_.path();
};

// Item 15: `explain > /dev/full` exited 0.
TEST_F(Output, AFullStdoutIsAnError) {
  for (const char* json : {"", " --json"}) {
    const std::string cmd = std::string("'") + R3FUZZ_BINARY + "' explain '" + a_case().string() + "'" + json +
                            " >/dev/full 2>'" + (dir_ / "stderr").string() + "'";
    const int code = r3::test::exit_code_of_wait_status(std::system(cmd.c_str()));
    EXPECT_EQ(code, 2) << cmd;
    // The reason is errno's when the final flush is the write that fails ("No space left on
    // device"); an earlier failed write leaves none behind that can be trusted ("write error").
    EXPECT_EQ(r3::test::read_file_bytes(dir_ / "stderr").rfind("r3fuzz: cannot write to standard output: ", 0), 0)
        << cmd;
  }
}

// Item 15: --out naming a file, or a folder r3fuzz cannot write into, is exit 2 before any case.
TEST_F(Output, ABadOutFolderIsRefusedBeforeAnyCase) {
  const fs::path file = scratch_.write("a-file", "x");
  Ran r = run({"run", "--out", file.string(), "--cases", "10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "") << "no case ran";
  EXPECT_EQ(r.err, "r3fuzz run: --out " + file.string() + ": not a directory\n");

  r = run({"run", "--out", (file / "below").string(), "--cases", "10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "r3fuzz run: --out " + (file / "below").string() + ": " + file.string() + " is not a directory\n");

  // /proc takes no new files, not even root's (a chmod'ed folder would not stop root).
  r = run({"run", "--out", "/proc/r3fuzz-out", "--cases", "10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("r3fuzz run: --out /proc/r3fuzz-out: cannot write into /proc: ", 0), 0) << r.err;

  r = run({"shrink", a_case().string(), "--impl", "vllm-50874", "--out", file.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "r3fuzz shrink: --out " + file.string() + ": not a directory\n");
}

// Item 17: replay commands print paths shell-quoted, and the printed command works as pasted.
TEST_F(Output, ReplayCommandsAreShellQuoted) {
  const fs::path out = dir_ / "with space 'and quote'";
  const Ran found = run({"run", "--cases", "300", "--no-shrink", "--json", "--out", out.string()});
  ASSERT_EQ(found.exit_code, 1) << found.err;
  const nlohmann::json doc = nlohmann::json::parse(found.out);
  ASSERT_FALSE(doc["failures"].empty());
  const std::string file = doc["failures"][0]["file"];
  const std::string quoted = "'" + (dir_ / "with space '\\''and quote'\\''").string() + file.substr(out.string().size()) + "'";
  EXPECT_EQ(doc["failures"][0]["replay"], r3::program_word(R3FUZZ_BINARY) + " replay " + quoted);
  // Pasted into a shell as printed, it replays the finding (tests/cli/pasted_commands_test.cpp).
  const std::string pasted = doc["failures"][0]["replay"];
  const std::string sh = pasted + " >'" + (dir_ / "stdout").string() + "' 2>'" + (dir_ / "stderr").string() + "'";
  const Ran again = r3::test::captured_run(r3::test::exit_code_of_wait_status(std::system(sh.c_str())), dir_);
  EXPECT_EQ(again.exit_code, 0) << pasted << "\n" << again.out << again.err;
  EXPECT_NE(again.out.find(": as expected"), std::string::npos) << again.out;
}

}  // namespace
