// `r3fuzz export F --pytest` for every corpus/regression entry, run by real pytest on real torch
// against the project's sample engines: it fails on the sample that has the entry's bug and
// passes on the fixed one (issue 20). The failure a user reads is asserted word for word.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/codec/case_json.hpp"
#include "tests/examples/torch_python.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace r3 {
namespace {

namespace fs = std::filesystem;
using test::torch_python;

const fs::path kSource = R3FUZZ_SOURCE_DIR;

struct PytestRun {
  int exit_code = -1;
  std::string out;
};

class ExportedPytest : public ::testing::Test {
 protected:
  // The exported module of `entry`, written into the scratch folder.
  fs::path exported(const fs::path& entry) {
    const fs::path file = dir_ / ("test_" + entry.stem().string() + ".py");
    const auto run = test::run_binary(R3FUZZ_BINARY, {"export", entry.string(), "--pytest", "--out", file.string()}, dir_);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, "wrote " + file.string() + "; run it: pytest " + file.string() + "\n");
    return file;
  }

  // pytest on `module` with the sample engine `sample` and the allocation `sizing`.
  PytestRun pytest(const fs::path& module, const std::string& sample, const std::string& sizing) {
    const std::string cmd = "cd '" + dir_.string() + "' && COLUMNS=400 PYTHONPATH='" + (kSource / "examples/python").string() +
                            "' R3FUZZ_ENGINE=sample_engines." + sample + ":RoutedExpertsCapturer R3FUZZ_SIZING=" +
                            sizing + " " + torch_python() + " -m pytest -q -rf -p no:cacheprovider '" +
                            module.string() + "' >pytest.out 2>&1";
    const int status = std::system(cmd.c_str());
    return {test::exit_code_of_wait_status(status), test::read_file_bytes(dir_ / "pytest.out")};
  }

  const test::ScratchDir scratch_{"r3fuzz-exported-pytest"};
  const fs::path dir_ = scratch_.path();
};

// The sample that carries the bug an entry's "expect" names.
std::string buggy_sample(const std::string& impl) { return impl == "vllm-pre-50874" ? "vllm_pre_50874" : "vllm_50874"; }

TEST_F(ExportedPytest, EveryRegressionEntryFailsOnItsBugAndPassesOnTheFix) {
  R3FUZZ_NEED_TORCH();
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(kSource / "corpus/regression"))
    if (e.path().extension() == ".json") entries.push_back(e.path());
  ASSERT_GE(entries.size(), 7u);
  for (const fs::path& entry : entries) {
    SCOPED_TRACE(entry.filename().string());
    auto c = read_case_file(entry.string());
    ASSERT_TRUE(c.ok()) << c.error().message;
    ASSERT_TRUE(c->expect);
    const fs::path module = exported(entry);
    const PytestRun bug = pytest(module, buggy_sample(c->expect->impl), c->expect->impl);
    EXPECT_EQ(bug.exit_code, 1) << bug.out;  // pytest: 1 = some tests failed
    EXPECT_NE(bug.out.find("FAILED "), std::string::npos) << bug.out;
    const PytestRun fixed = pytest(module, "r3_fixed", "r3-fixed");
    EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
    EXPECT_NE(fixed.out.find(" passed in "), std::string::npos) << fixed.out;
  }
}

// docs/FINDINGS.md #4 as its maintainers would read it: the second micro-batch's token in row 0.
TEST_F(ExportedPytest, MicrobatchOverwriteFailureNamesRankRowAndTokens) {
  R3FUZZ_NEED_TORCH();
  const fs::path module = exported(kSource / "corpus/regression/vllm-50874-wrong-rows-microbatch-overwrite.json");
  const PytestRun run = pytest(module, "vllm_50874", "vllm-50874");
  EXPECT_EQ(run.exit_code, 1);
  const std::string name = module.filename().string();
  for (const std::string& line : std::vector<std::string>{
           "\nbuffer row 0 of dp 0 tp 0 holds token (0, 1), expected token (0, 0) (2 buffer rows wrong)",
           "\nbuffer row 0 of dp 1 tp 0 holds token (1, 1), expected token (1, 0) (2 buffer rows wrong)",
           "\nFAILED " + name + "::test_rank_captures_its_tokens[dp0-tp0]",
           "\nFAILED " + name + "::test_rank_captures_its_tokens[dp1-tp0]",
       }) {
    EXPECT_NE(run.out.find(line + "\n"), std::string::npos) << line << "\n---\n" << run.out;
  }
  EXPECT_NE(run.out.find("2 failed in "), std::string::npos) << run.out;
}

// Row 1 keeps its value from before the step, and the DP-chunking entry raises: both named.
TEST_F(ExportedPytest, StaleRowsAndRaisedCapturesAreNamed) {
  R3FUZZ_NEED_TORCH();
  const fs::path fact = exported(kSource / "corpus/regression/vllm-50874-wrong-rows-spec-9-1-fact.json");
  const PytestRun run = pytest(fact, "vllm_50874", "vllm-50874");
  EXPECT_NE(run.out.find("buffer row 0 of dp 0 tp 0 holds token (0, 5), expected token (0, 0) (10 buffer rows wrong)\n"),
            std::string::npos) << run.out;
  const fs::path chunked = exported(kSource / "corpus/regression/vllm-50874-spurious-reject-dp-chunking.json");
  const PytestRun raised = pytest(chunked, "vllm_50874", "vllm-50874");
  EXPECT_NE(raised.out.find("\ndp 0 tp 0: capture raised AssertionError: routed experts have 1 rows; expected 3 "
                            "(all DP ranks), 2 (this DP rank), 2 (sum of local_sizes) (call 1 of 2); the reference "
                            "accepts this step\n"),
            std::string::npos) << raised.out;
}

}  // namespace
}  // namespace r3
