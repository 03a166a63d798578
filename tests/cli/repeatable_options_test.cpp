// End-to-end tests of repeatable options (README, "Usage"): a repeatable option takes one value
// per use (`--impl A --impl B`), so the words after it are the command's files, for every command
// that takes files, and an error naming the stray word for every command that takes none. The
// form a user types first, `replay --impl r3-fixed a.json b.json`, once took a.json as a second
// implementation and replayed nothing.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using Output = r3::test::BinaryRun;

const fs::path kMicrobatch =
    fs::path(R3FUZZ_SOURCE_DIR) / "corpus" / "regression" / "vllm-50874-wrong-rows-microbatch-overwrite.json";

// A small vLLM case that every implementation passes; no "expect".
const std::string kSmallCase = R"({"format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false},
 "model": {"layers": 2, "top_k": 1, "experts": 8}, "max_num_tokens": 4, "tokens": [1], "padding": "none",
 "path": "single", "layer": 0})";

class RepeatableOptions : public r3::test::WorkDirFixture {
 protected:
  RepeatableOptions() : WorkDirFixture("r3fuzz-repeatable-options") {}
  void SetUp() override {
    WorkDirFixture::SetUp();
    write("a.json", kSmallCase);
    write("b.json", kSmallCase);
    write("mb.json", r3::test::read_file_bytes(kMicrobatch));
  }
};

TEST_F(RepeatableOptions, ReplayTakesTheFilesAfterImplAsFiles) {
  Output o = run("replay --impl r3-fixed a.json b.json");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;  // was 2: "b.json: --impl a.json: unknown implementation"
  EXPECT_EQ(o.out,
            "a.json: r3-fixed: pass (concrete)\n"
            "b.json: r3-fixed: pass (concrete)\n"
            "replay: 2 case files, 0 expectations checked, 0 unexpected, 0 could not be replayed: exit 0\n");
  EXPECT_EQ(o.err, "");
  // Two uses, two implementations; then the files. --mode between them changes nothing.
  o = run("replay --impl r3-fixed --impl vllm-50874 --mode concrete a.json b.json");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out,
            "a.json: r3-fixed: pass (concrete)\n"
            "a.json: vllm-50874: pass (concrete)\n"
            "b.json: r3-fixed: pass (concrete)\n"
            "b.json: vllm-50874: pass (concrete)\n"
            "replay: 2 case files, 0 expectations checked, 0 unexpected, 0 could not be replayed: exit 0\n");
  // The same as --impl=NAME, and as the files first.
  const Output eq = run("replay --impl=r3-fixed --impl=vllm-50874 a.json b.json");
  EXPECT_EQ(eq.out, o.out);
  const Output first = run("replay a.json b.json --impl r3-fixed --impl vllm-50874");
  EXPECT_EQ(first.out, o.out);
}

TEST_F(RepeatableOptions, RunTakesOneValuePerUseAndNamesTheStrayWord) {
  Output o = run("run --cases 1 --out o --impl r3-fixed vllm-50874");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;  // was 0: vllm-50874 taken as a second --impl
  EXPECT_EQ(o.err.rfind("The following argument was not expected: vllm-50874\n", 0), 0u) << o.err;
  EXPECT_EQ(o.out, "");
  o = run("run --cases 1 --out o --size tiny small");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;  // was 0: both sizes
  EXPECT_EQ(o.err.rfind("The following argument was not expected: small\n", 0), 0u) << o.err;
  EXPECT_FALSE(fs::exists(work_ / "o"));
  // Each use still adds one.
  o = run("run --cases 20 --jobs 1 --out o --impl r3-fixed --impl vllm-50874 --size tiny --size small");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("budget 20 cases, implementations r3-fixed, vllm-50874\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  by size:    small 10, tiny 10\n"), std::string::npos) << o.out;
}

TEST_F(RepeatableOptions, MutantsTakesOneCarrierAndOneFaultPerUse) {
  Output o = run("mutants --seeds 1 --max-cases 1 --no-shrink --carrier r3-fixed vllm-pre-50874");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;  // was a matrix of both carriers
  EXPECT_EQ(o.err.rfind("The following argument was not expected: vllm-pre-50874\n", 0), 0u) << o.err;
  o = run("mutants --seeds 1 --max-cases 1 --no-shrink --carrier r3-fixed --fault no-trim chunk-row0");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err.rfind("The following argument was not expected: chunk-row0\n", 0), 0u) << o.err;
}

// Commands whose flags take one value each: files after any flag are files (guards for the class).
TEST_F(RepeatableOptions, EveryCommandTakesTheFilesAfterItsFlags) {
  Output o = run("shrink --impl vllm-50874 --out s mb.json --max-judgements 20");
  EXPECT_NE(o.exit_code, 2) << o.out << o.err;
  o = run("seed --out bin --profile vllm --to-binary a.json mb.json");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_TRUE(fs::exists(work_ / "bin/a.bin"));
  EXPECT_TRUE(fs::exists(work_ / "bin/mb.bin"));
  o = run("export --engine pkg.mod:Cls --pytest mb.json");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  o = run("explain --json a.json");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  o = run("exhaust --impl r3-fixed vllm-50874");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err.rfind("The following argument was not expected: vllm-50874\n", 0), 0u) << o.err;
}

}  // namespace
