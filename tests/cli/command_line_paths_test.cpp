// A path given on the command line is shown through the terminal escape by every command, as
// replay shows it (docs/SECURITY.md, rule 5): a file name can hold ESC and line ends (a glob passes
// such a name on), and printed raw it would move the cursor or forge a line of the report.
#include <string>

#include <gtest/gtest.h>

#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

using Output = r3::test::BinaryRun;

// ESC [31m (red) and a line end in a file name; the second line pretends to be r3fuzz's.
const std::string kName = "bad\x1b[31m\nr3fuzz: all good.json";
const std::string kShown = "bad\\x1b[31m\\nr3fuzz: all good.json";

const std::string kValidCase = R"({"format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false},
 "model": {"layers": 2, "top_k": 1, "experts": 8}, "max_num_tokens": 4, "tokens": [1], "padding": "none",
 "path": "single", "layer": 0})";

bool has_control_byte(const std::string& text) {
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if ((u < 0x20 && ch != '\n') || u == 0x7f) return true;
  }
  return false;
}

class CommandLinePaths : public r3::test::WorkDirFixture {
 protected:
  CommandLinePaths() : WorkDirFixture("r3fuzz-command-line-paths") {}

  // r3fuzz with `args` after the command, the quoted name appended: one line of stderr.
  Output run_on_name(const std::string& command) { return run(command + " '" + kName + "'"); }
};

TEST_F(CommandLinePaths, ExplainShowsThePathEscaped) {
  write(kName, "{\"format\": \"r3fuzz-case/1\"");
  const Output o = run_on_name("explain");
  EXPECT_EQ(o.exit_code, 2);
  // Was "r3fuzz explain: bad\x1b[31m" + a raw line end + "r3fuzz: all good.json: invalid JSON ...".
  EXPECT_EQ(o.err.rfind("r3fuzz explain: " + kShown + ": invalid JSON: ", 0), 0u) << o.err;
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << o.err;  // one line
  EXPECT_FALSE(has_control_byte(o.err)) << o.err;
}

TEST_F(CommandLinePaths, ExportShowsThePathEscapedInErrorsAndWhatItWrote) {
  write(kName, "{\"format\": \"r3fuzz-case/1\"");
  const Output bad = run("export '" + kName + "' --pytest");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("r3fuzz export: " + kShown + ": invalid JSON: ", 0), 0u) << bad.err;
  EXPECT_EQ(bad.err.find('\n'), bad.err.size() - 1) << bad.err;
  EXPECT_FALSE(has_control_byte(bad.err)) << bad.err;

  // The file it writes, named with the same bytes: "wrote NAME; run it: pytest 'NAME'" on one line.
  write("case.json", kValidCase);
  const Output wrote = run("export case.json --pytest --out '" + kName + "'");
  EXPECT_EQ(wrote.exit_code, 0) << wrote.err;
  EXPECT_EQ(wrote.out, "wrote " + kShown + "; run it: pytest '" + kShown + "'\n");  // was raw
  EXPECT_TRUE(std::filesystem::exists(work_ / kName));

  // --out naming a folder that does not exist: the error names it escaped too.
  const Output no_dir = run("export case.json --pytest --out '" + kName + "/x.py'");
  EXPECT_EQ(no_dir.exit_code, 2);
  EXPECT_NE(no_dir.err.find(kShown + "/x.py"), std::string::npos) << no_dir.err;
  EXPECT_EQ(no_dir.err.find('\n'), no_dir.err.size() - 1) << no_dir.err;
  EXPECT_FALSE(has_control_byte(no_dir.err)) << no_dir.err;
}

TEST_F(CommandLinePaths, ShrinkShowsThePathEscaped) {
  write(kName, "{\"format\": \"r3fuzz-case/1\"");
  const Output o = run_on_name("shrink --impl vllm-50874");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err.rfind("r3fuzz shrink: " + kShown + ": invalid JSON: ", 0), 0u) << o.err;
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << o.err;
  EXPECT_FALSE(has_control_byte(o.err)) << o.err;

  // --from-bytes and --out are paths from the command line too.
  write("crash", "");
  const Output bytes = run("shrink --impl vllm-50874 --from-bytes '" + kName + "'");
  EXPECT_EQ(bytes.exit_code, 2);
  EXPECT_EQ(bytes.err.rfind("r3fuzz shrink: " + kShown + ": ", 0), 0u) << bytes.err;
  EXPECT_EQ(bytes.err.find('\n'), bytes.err.size() - 1) << bytes.err;
  write("case.json", kValidCase);
  const Output out = run("shrink case.json --impl vllm-50874 --out '" + kName + "'");  // a file, not a folder
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.err.rfind("r3fuzz shrink: --out " + kShown + ": ", 0), 0u) << out.err;
  EXPECT_EQ(out.err.find('\n'), out.err.size() - 1) << out.err;
  EXPECT_FALSE(has_control_byte(out.err)) << out.err;
}

}  // namespace
