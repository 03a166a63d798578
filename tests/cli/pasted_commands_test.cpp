// End-to-end: every command r3fuzz prints for the user to paste runs as printed. The `replay:`
// and `export:` lines of run, replay and shrink, run --json's "replay" and "export", the JUnit
// texts and an exported pytest's EXPORT_COMMAND name the program as it was run (a path holding a
// space and a quote here), so each one, fed to /bin/sh from another working directory with no
// r3fuzz on PATH, replays or exports its case. They used to say `r3fuzz replay ...`, which such
// a shell cannot find (exit 127).
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Ran = r3::test::BinaryRun;
using r3::test::read_file_bytes;

// A PATH that holds the usual tools and no r3fuzz.
constexpr const char* kPlainPath = "/usr/local/bin:/usr/bin:/bin";
const std::string kModuleStart = "\"\"\"A finding of r3fuzz as a pytest module";
const std::string kRegression = std::string(R3FUZZ_SOURCE_DIR) + "/corpus/regression/";

// `text` as one POSIX shell word, written here independently of r3fuzz's own shell_quote().
std::string sq(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// A command r3fuzz printed for pasting, and the label it came after.
struct Printed {
  std::string label;  // "replay" or "export"
  std::string command;
};

// The commands on a report's lines: what follows "replay: " or "export: " inside an indented
// line ("  replay: CMD", "      finding 1; replay: CMD"). replay's summary line, "replay: 2
// case files, ...", starts its line, and a parenthesis ("(not written: --out is off)", "(none:
// engine vllm: ...)") is no command.
std::vector<Printed> commands_in_report(const std::string& text) {
  std::vector<Printed> found;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    for (const std::string label : {"replay", "export"}) {
      const size_t at = line.find(label + ": ");
      if (at == std::string::npos || at == 0 || line[at - 1] != ' ') continue;
      const std::string command = line.substr(at + label.size() + 2);
      if (command.rfind('(', 0) != 0) found.push_back({label, command});
    }
    start = end + 1;
  }
  return found;
}

// The XML text `text` stands for: the five named entities and numeric character references.
std::string xml_unescaped(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const size_t semi = text[i] == '&' ? text.find(';', i) : std::string::npos;
    if (semi == std::string::npos) {
      out += text[i];
      continue;
    }
    const std::string name = text.substr(i + 1, semi - i - 1);
    if (name == "amp") out += '&';
    else if (name == "lt") out += '<';
    else if (name == "gt") out += '>';
    else if (name == "quot") out += '"';
    else if (name == "apos") out += '\'';
    else if (name.rfind("#x", 0) == 0) out += static_cast<char>(std::stoi(name.substr(2), nullptr, 16));
    else if (name.rfind("#", 0) == 0) out += static_cast<char>(std::stoi(name.substr(1)));
    else out += "&" + name + ";";
    i = semi;
  }
  return out;
}

// The commands in a JUnit report's texts: its "replay: CMD" and "export: CMD" lines.
std::vector<Printed> commands_in_junit(const std::string& xml) {
  std::vector<Printed> found;
  const std::string text = "\n" + xml_unescaped(xml);
  for (const std::string label : {"replay", "export"}) {
    for (size_t at = text.find("\n" + label + ": "); at != std::string::npos;
         at = text.find("\n" + label + ": ", at + 1)) {
      const size_t from = at + label.size() + 3;
      const std::string command = text.substr(from, text.find('\n', from) - from);
      if (command.rfind("(not written", 0) != 0) found.push_back({label, command});
    }
  }
  return found;
}

class PastedCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const fs::path& d : {tool_.parent_path(), here_, elsewhere_, cases_}) fs::create_directories(d);
    fs::create_symlink(binary(), tool_);
    fs::copy_file(kRegression + "vllm-50874-wrong-rows-microbatch-overwrite.json", a_case_);
  }

  // r3fuzz by the path `tool_`, typed into a shell in here_ as a user would.
  Ran r3fuzz(const std::string& args) { return in_shell(here_, sq(tool_.string()) + " " + args); }

  // `line` exactly as given, run by /bin/sh in `cwd` with PATH `path`.
  Ran in_shell(const fs::path& cwd, const std::string& line, const std::string& path = kPlainPath) {
    const std::string cmd = "cd " + sq(cwd.string()) + " && env PATH=" + sq(path) + " /bin/sh -c " + sq(line) + " >" +
                            sq((dir_ / "stdout").string()) + " 2>" + sq((dir_ / "stderr").string());
    return r3::test::captured_run(r3::test::exit_code_of_wait_status(std::system(cmd.c_str())), dir_);
  }

  // Each printed command, pasted in elsewhere_: a replay replays its case as expected (exit 0),
  // an export writes the pytest module (exit 0). Every one starts with the program as it was run.
  void expect_each_runs_as_printed(const std::vector<Printed>& printed, const std::string& where) {
    ASSERT_FALSE(printed.empty()) << "no replay or export command in " << where;
    for (const Printed& p : printed) {
      SCOPED_TRACE(where + ": " + p.label + ": " + p.command);
      EXPECT_EQ(p.command.rfind(sq(tool_.string()) + " " + p.label + " ", 0), 0u);
      const Ran pasted = in_shell(elsewhere_, p.command);
      EXPECT_EQ(pasted.exit_code, 0) << pasted.out << pasted.err;
      if (p.label == "replay") {
        EXPECT_NE(pasted.out.find(": as expected"), std::string::npos) << pasted.out;
      } else {
        EXPECT_EQ(pasted.out.rfind(kModuleStart, 0), 0u) << pasted.out.substr(0, 200);
      }
    }
  }

  static std::string binary() { return R3FUZZ_BINARY; }

  const r3::test::ScratchDir scratch_{"r3fuzz-pasted"};
  const fs::path dir_ = scratch_.path();
  const fs::path tool_ = dir_ / "my tools" / "it's" / "r3fuzz";  // a symbolic link to the binary
  const fs::path here_ = dir_ / "here";                           // where r3fuzz runs
  const fs::path elsewhere_ = dir_ / "elsewhere";                 // where its commands are pasted
  const fs::path cases_ = dir_ / "case files";
  const fs::path a_case_ = cases_ / "the microbatch finding.json";  // fails on vllm-50874, as it expects
  const fs::path out_ = dir_ / "out dir";
};

TEST_F(PastedCommands, RunReportAndJunitLinesRunAsPrinted) {
  const fs::path xml = dir_ / "run.xml";
  const Ran run = r3fuzz("run --cases 300 --jobs 1 --out " + sq(out_.string()) + " --junit " + sq(xml.string()));
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  expect_each_runs_as_printed(commands_in_report(run.out), "run's report");
  expect_each_runs_as_printed(commands_in_junit(read_file_bytes(xml)), "run's JUnit report");
}

TEST_F(PastedCommands, RunJsonFieldsRunAsPrinted) {
  const Ran run = r3fuzz("run --cases 300 --jobs 1 --json --out " + sq(out_.string()));
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  std::vector<Printed> printed;
  for (const char* list : {"findings", "failures"}) {
    for (const auto& entry : doc[list]) {
      for (const char* label : {"replay", "export"}) printed.push_back({label, entry[label].get<std::string>()});
    }
  }
  expect_each_runs_as_printed(printed, "run --json");
}

TEST_F(PastedCommands, ReplayLinesAndJunitRunAsPrinted) {
  const fs::path xml = dir_ / "replay.xml";
  const Ran replay = r3fuzz("replay " + sq(a_case_.string()) + " --junit " + sq(xml.string()));
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  const std::vector<Printed> printed = commands_in_report(replay.out);
  ASSERT_EQ(printed.size(), 2u) << replay.out;
  EXPECT_EQ(printed[0].command, sq(tool_.string()) + " replay " + sq(a_case_.string()));
  EXPECT_EQ(printed[1].command, sq(tool_.string()) + " export " + sq(a_case_.string()) + " --pytest");
  expect_each_runs_as_printed(printed, "replay's report");
  expect_each_runs_as_printed(commands_in_junit(read_file_bytes(xml)), "replay's JUnit report");
}

TEST_F(PastedCommands, ShrinkLinesRunAsPrinted) {
  const Ran shrink = r3fuzz("shrink " + sq(a_case_.string()) + " --out " + sq(out_.string()));
  ASSERT_EQ(shrink.exit_code, 0) << shrink.out << shrink.err;
  const std::vector<Printed> printed = commands_in_report(shrink.out);
  EXPECT_EQ(printed.size(), 2u) << shrink.out;
  expect_each_runs_as_printed(printed, "shrink's report");
}

// The module says how it was written; that command, pasted, writes the same module.
TEST_F(PastedCommands, AnExportedModulesExportCommandWritesItAgain) {
  const fs::path module = dir_ / "test_case.py";
  const Ran exported = r3fuzz("export " + sq(a_case_.string()) + " --pytest --out " + sq(module.string()));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const std::string text = read_file_bytes(module);
  const std::string key = "\nEXPORT_COMMAND = \"";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos) << text;
  // A Python string literal: this one's only escapes are \\ and \" (no control characters in it).
  std::string command;
  for (size_t i = at + key.size(); i < text.size() && text[i] != '"'; ++i)
    command += text[i] == '\\' ? text[++i] : text[i];
  EXPECT_EQ(command, sq(tool_.string()) + " export " + sq(a_case_.string()) + " --pytest");
  const Ran pasted = in_shell(elsewhere_, command);
  EXPECT_EQ(pasted.exit_code, 0) << pasted.err;
  EXPECT_EQ(pasted.out, text);
}

// A relative path is printed as it was typed: pasted where it was run, it runs the same binary.
TEST_F(PastedCommands, ARelativeProgramPathIsPrintedAsTyped) {
  fs::create_directories(here_ / "bin dir");
  fs::create_symlink(binary(), here_ / "bin dir" / "r3fuzz");
  const Ran replay = in_shell(here_, "'bin dir/r3fuzz' replay " + sq(a_case_.string()));
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  const std::vector<Printed> printed = commands_in_report(replay.out);
  ASSERT_EQ(printed.size(), 2u) << replay.out;
  EXPECT_EQ(printed[0].command, "'bin dir/r3fuzz' replay " + sq(a_case_.string()));
  const Ran pasted = in_shell(here_, printed[0].command);
  EXPECT_EQ(pasted.exit_code, 0) << pasted.out << pasted.err;
  EXPECT_NE(pasted.out.find(": as expected"), std::string::npos) << pasted.out;
}

// Found on PATH by its name, r3fuzz is named so again: the line reads as the README shows it.
TEST_F(PastedCommands, AProgramFoundOnPathIsNamedR3fuzz) {
  const std::string path = tool_.parent_path().string() + ":" + kPlainPath;
  const Ran replay = in_shell(here_, "r3fuzz replay " + sq(a_case_.string()), path);
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  const std::vector<Printed> printed = commands_in_report(replay.out);
  ASSERT_EQ(printed.size(), 2u) << replay.out;
  EXPECT_EQ(printed[0].command, "r3fuzz replay " + sq(a_case_.string()));
  const Ran pasted = in_shell(elsewhere_, printed[0].command, path);
  EXPECT_EQ(pasted.exit_code, 0) << pasted.out << pasted.err;
}

}  // namespace
