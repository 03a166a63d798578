// End-to-end tests of `r3fuzz export` and of the JUnit reports of `run` and `replay`: the real
// binary (R3FUZZ_BINARY), its exit codes, files and messages.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "fuzz/campaign/shell_quote.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Output = r3::test::BinaryRun;

const std::string kRegression = std::string(R3FUZZ_SOURCE_DIR) + "/corpus/regression/";
const std::string kMicrobatch = kRegression + "vllm-50874-wrong-rows-microbatch-overwrite.json";
// How the commands r3fuzz prints name the binary the tests run (tests/cli/pasted_commands_test.cpp).
const std::string kProgram = r3::program_word(R3FUZZ_BINARY);

class ExportCommand : public ::testing::Test {
 protected:
  Output run(const std::vector<std::string>& args) { return r3::test::run_binary(R3FUZZ_BINARY, args, dir_); }
  const r3::test::ScratchDir scratch_{"r3fuzz-export"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(ExportCommand, WritesThePytestModuleToStdoutOrToOut) {
  const Output out = run({"export", kMicrobatch, "--pytest"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("\"\"\"A finding of r3fuzz as a pytest module", 0), 0u);
  EXPECT_NE(out.out.find("\nCASE_FILE = \"" + kMicrobatch + "\"\n"), std::string::npos);
  const fs::path file = dir_ / "test_mb.py";
  const Output written = run({"export", kMicrobatch, "--pytest", "--engine", "pkg.mod:Cls", "--out", file.string()});
  EXPECT_EQ(written.exit_code, 0) << written.err;
  EXPECT_EQ(written.out, "wrote " + file.string() + "; run it: pytest " + file.string() + "\n");
  const std::string text = r3::test::read_file_bytes(file);
  EXPECT_NE(text.find("\nDEFAULT_ENGINE = \"pkg.mod:Cls\"\n"), std::string::npos);
  EXPECT_NE(
      text.find("\nEXPORT_COMMAND = \"" + kProgram + " export " + kMicrobatch + " --pytest --engine pkg.mod:Cls\"\n"),
      std::string::npos);
}

TEST_F(ExportCommand, UsageErrorsAreExit2WithTheReason) {
  const Output no_format = run({"export", kMicrobatch});
  EXPECT_EQ(no_format.exit_code, 2);
  EXPECT_EQ(no_format.err, "r3fuzz export: choose what to export: --pytest (the only format so far)\n");
  const Output bad_engine = run({"export", kMicrobatch, "--pytest", "--engine", "vllm"});
  EXPECT_EQ(bad_engine.exit_code, 2);
  EXPECT_EQ(bad_engine.err, "r3fuzz export: --engine vllm: expected MODULE:CLASS, got no ':'\n");
  const Output missing = run({"export", (dir_ / "none.json").string(), "--pytest"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.json"), std::string::npos) << missing.err;
  const Output unwritable = run({"export", kMicrobatch, "--pytest", "--out", (dir_ / "no/such/dir/t.py").string()});
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_EQ(unwritable.err.rfind("r3fuzz export: --out " + (dir_ / "no/such/dir/t.py").string() +
                                     ": cannot open for writing: No such file or directory", 0),
            0u) << unwritable.err;
}

// A trace file exports as a trace module (fuzz/export/trace_pytest_writer.hpp); a trace the engine's
// part cannot drive is an input error naming why.
TEST_F(ExportCommand, ATraceFileExportsItsStepsOrSaysWhyItCannot) {
  const std::string traces = std::string(R3FUZZ_SOURCE_DIR) + "/corpus/traces/";
  const std::string ring = traces + "regression/trtllm-06a976ce-commit-before-reuse-wrong_route.json";
  const Output out = run({"export", ring, "--pytest"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("\"\"\"A serving trace of r3fuzz as a pytest module", 0), 0u);
  EXPECT_NE(out.out.find("\nTRACE_FILE = \"" + ring + "\"\n"), std::string::npos);
  EXPECT_NE(out.out.find("\nEXPORT_COMMAND = \"" + kProgram + " export " + ring + " --pytest\"\n"), std::string::npos);
  const std::string async = traces + "production/mooncake-excerpt-vllm-3.json";
  const Output refused = run({"export", async, "--pytest"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err.rfind("r3fuzz export: config.overlap: under async scheduling vLLM's engine core runs the "
                              "scheduler a step ahead of the worker's output; the vLLM trace harness drives the "
                              "connector synchronously\n", 0),
            0u) << refused.err;
}

TEST_F(ExportCommand, ReplayPrintsTheExportCommandAndWritesJunit) {
  const fs::path xml = dir_ / "replay.xml";
  const Output out = run({"replay", kMicrobatch, "--junit", xml.string()});
  EXPECT_EQ(out.exit_code, 0) << out.out << out.err;
  EXPECT_NE(out.out.find("\n  replay: " + kProgram + " replay " + kMicrobatch + "\n  export: " + kProgram +
                         " export " + kMicrobatch + " --pytest\n"),
            std::string::npos) << out.out;
  const std::string text = r3::test::read_file_bytes(xml);
  EXPECT_NE(text.find("<testsuites name=\"r3fuzz replay\" tests=\"1\" failures=\"0\" errors=\"0\">"), std::string::npos)
      << text;
  EXPECT_NE(text.find("<testcase classname=\"r3fuzz.replay.vllm-50874\" name=\"" + kMicrobatch + "\" time=\"0\">"),
            std::string::npos) << text;
}

TEST_F(ExportCommand, RunJunitHasOneFailingCasePerFinding) {
  const fs::path xml = dir_ / "run.xml";
  const Output out = run({"run", "--cases", "300", "--jobs", "1", "--impl", "vllm-50874", "--out",
                          (dir_ / "out").string(), "--junit", xml.string()});
  EXPECT_EQ(out.exit_code, 1) << out.err;
  const std::string text = r3::test::read_file_bytes(xml);
  size_t findings = 0;
  for (size_t at = out.out.find("  finding "); at != std::string::npos; at = out.out.find("\n  finding ", at + 1))
    ++findings;
  size_t failures = 0;
  for (size_t at = text.find("<failure "); at != std::string::npos; at = text.find("<failure ", at + 1)) ++failures;
  EXPECT_GE(findings, 1u);
  EXPECT_EQ(failures, findings) << text;
  EXPECT_NE(text.find("export: " + kProgram + " export " + (dir_ / "out").string() + "/finding-1-"), std::string::npos)
      << text;
  const Output bad = run({"run", "--cases", "5", "--impl", "r3-fixed", "--out", (dir_ / "out2").string(), "--junit",
                          (dir_ / "no/dir/run.xml").string()});
  EXPECT_EQ(bad.exit_code, 2);
  // Checked before the first case (tests/cli/report_path_checked_first_test.cpp).
  EXPECT_EQ(bad.err, "r3fuzz run: --junit " + (dir_ / "no/dir/run.xml").string() + ": no such folder: " +
                         (dir_ / "no/dir").string() + "\n");
}

}  // namespace
