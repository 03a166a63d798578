// `r3fuzz export F --pytest` for every corpus/regression entry, run by real pytest on real torch
// against the project's sample engines: it fails on the sample that has the entry's bug and
// passes on the fixed one (issue 20), vLLM, SGLang and vllm-ascend entries alike. The failure a
// user reads is asserted word for word.
#include <filesystem>
#include <fstream>
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

// A sample engine of examples/python as R3FUZZ_ENGINE, R3FUZZ_SIZING and R3FUZZ_SGLANG_VERSION name it.
struct Sample {
  std::string engine;
  std::string sizing;
  std::string version = "upstream";
};

const Sample kVllm50874{"sample_engines.vllm_50874:RoutedExpertsCapturer", "vllm-50874"};
const Sample kSglangUpstream{"sglang_capture_sample:RoutedExpertsCapturer", "sglang"};
const Sample kSglangMiles{"sglang_capture_sample:RoutedExpertsCapturer", "sglang-miles", "miles"};
const Sample kAscend{"sample_engines.ascend:RoutedExpertsCapturer", "ascend"};
const Sample kAscendFixed{"sample_engines.ascend_fixed:RoutedExpertsCapturer", "ascend-fixed"};

// The sample that carries the bug an entry's "expect" names, and the fixed one of its engine.
Sample buggy_sample(const std::string& impl) {
  if (impl == "vllm-pre-50874") return {"sample_engines.vllm_pre_50874:RoutedExpertsCapturer", impl};
  if (impl == "sglang") return kSglangUpstream;
  if (impl == "sglang-miles") return kSglangMiles;
  if (impl == "ascend") return kAscend;
  return kVllm50874;
}
Sample fixed_sample(const std::string& impl) {
  if (impl.rfind("sglang", 0) == 0) return {"sglang_capture_sample:FixedRoutedExpertsCapturer", "sglang-fixed"};
  if (impl.rfind("ascend", 0) == 0) return kAscendFixed;
  return {"sample_engines.r3_fixed:RoutedExpertsCapturer", "r3-fixed"};
}

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

  // pytest on `module` with the sample engine `sample` (its capturer, sizing and, for SGLang, the
  // model runner version).
  PytestRun pytest(const fs::path& module, const Sample& sample) {
    const std::string cmd = "cd '" + dir_.string() + "' && COLUMNS=400 PYTHONPATH='" + (kSource / "examples/python").string() +
                            "' R3FUZZ_ENGINE=" + sample.engine + " R3FUZZ_SIZING=" + sample.sizing +
                            " R3FUZZ_SGLANG_VERSION=" + sample.version + " " + torch_python() +
                            " -m pytest -q -rf -p no:cacheprovider '" + module.string() + "' >pytest.out 2>&1";
    const int status = std::system(cmd.c_str());
    return {test::exit_code_of_wait_status(status), test::read_file_bytes(dir_ / "pytest.out")};
  }

  const test::ScratchDir scratch_{"r3fuzz-exported-pytest"};
  const fs::path dir_ = scratch_.path();
};

// Every per-step engine has sample engines in examples/python: vLLM's, SGLang's and vllm-ascend's.
bool has_sample(const Case& c) {
  const std::string_view engine = to_string(c.engine);
  return engine == "vllm" || engine == "sglang" || engine == "ascend";
}

TEST_F(ExportedPytest, EveryRegressionEntryFailsOnItsBugAndPassesOnTheFix) {
  R3FUZZ_NEED_TORCH();
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(kSource / "corpus/regression"))
    if (e.path().extension() == ".json") entries.push_back(e.path());
  int sampled = 0;
  for (const fs::path& entry : entries) {
    SCOPED_TRACE(entry.filename().string());
    auto c = read_case_file(entry.string());
    ASSERT_TRUE(c.ok()) << c.error().message;
    ASSERT_TRUE(c->expect);
    if (!has_sample(*c)) continue;
    ++sampled;
    const fs::path module = exported(entry);
    const PytestRun bug = pytest(module, buggy_sample(c->expect->impl));
    EXPECT_EQ(bug.exit_code, 1) << bug.out;  // pytest: 1 = some tests failed
    EXPECT_NE(bug.out.find("FAILED "), std::string::npos) << bug.out;
    const PytestRun fixed = pytest(module, fixed_sample(c->expect->impl));
    EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
    EXPECT_NE(fixed.out.find(" passed in "), std::string::npos) << fixed.out;
  }
  EXPECT_GE(sampled, 18);  // 7 vLLM, 5 SGLang (S1 to S5), 6 vllm-ascend (A1 to A5)
}

// A vllm-ascend entry exports a module whose default capturer is the plugin's patched one; without
// vllm_ascend installed, pytest says which module it could not load and how to name another.
TEST_F(ExportedPytest, AnAscendEntryNamesThePluginsCapturerItCannotLoadHere) {
  R3FUZZ_NEED_TORCH();
  const fs::path module = exported(kSource / "corpus/regression/ascend-wrong_rows-dp1-tp2-b1-issue-15451.json");
  const std::string cmd = "cd '" + dir_.string() + "' && COLUMNS=400 " + torch_python() +
                          " -m pytest -q -rf -p no:cacheprovider '" + module.string() + "' >pytest.out 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string out = test::read_file_bytes(dir_ / "pytest.out");
  EXPECT_EQ(test::exit_code_of_wait_status(status), 1) << out;
  EXPECT_NE(out.find("cannot load the capturer vllm_ascend.patch.worker.patch_routed_experts_capture:RoutedExpertsCapturer "
                     "(ModuleNotFoundError: No module named 'vllm_ascend'); set R3FUZZ_ENGINE=MODULE:CLASS"),
            std::string::npos)
      << out;
}

// vllm-ascend's production layouts (corpus/production/ascend-*, each from the plugin's tests or
// docs): each does on the sample of the plugin's capture what its "expect" says (a layout without
// one passes), and passes on the fixed sample.
TEST_F(ExportedPytest, AscendProductionEntriesDoWhatTheirExpectSays) {
  R3FUZZ_NEED_TORCH();
  int ran = 0;
  for (const auto& e : fs::directory_iterator(kSource / "corpus/production")) {
    if (e.path().extension() != ".json" || e.path().filename().string().rfind("ascend-", 0) != 0) continue;
    SCOPED_TRACE(e.path().filename().string());
    auto c = read_case_file(e.path().string());
    ASSERT_TRUE(c.ok()) << c.error().message;
    ++ran;
    const fs::path module = exported(e.path());
    const PytestRun sample = pytest(module, kAscend);
    EXPECT_EQ(sample.exit_code, c->expect ? 1 : 0) << sample.out;
    if (c->expect && c->expect->severity == Severity::latent) {  // only TP ranks > 0 fail
      EXPECT_EQ(sample.out.find("tp0]"), std::string::npos) << sample.out;
    }
    const PytestRun fixed = pytest(module, kAscendFixed);
    EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
  }
  EXPECT_EQ(ran, 6);
}

// A1 (issue #15451) as the plugin's maintainers would read it: TP rank 0 keeps row 1 from before
// the step, TP rank 1 writes its own share. The plugin's own capture at main 182b75ea prints the
// same lines (docs/reports/ascend-real-code.md).
TEST_F(ExportedPytest, AscendIssue15451NamesTheRowsTpRanksLeaveOrMisplace) {
  R3FUZZ_NEED_TORCH();
  const fs::path module = exported(kSource / "corpus/regression/ascend-wrong_rows-dp1-tp2-b1-issue-15451.json");
  const PytestRun run = pytest(module, kAscend);
  EXPECT_EQ(run.exit_code, 1);
  const std::string name = module.filename().string();
  for (const std::string& line : std::vector<std::string>{
           "\nbuffer row 1 of dp 0 tp 0 holds its value from before the step, expected token (0, 1) (1 buffer row wrong)",
           "\nbuffer row 0 of dp 0 tp 1 holds token (0, 1), expected token (0, 0) (2 buffer rows wrong); latent: only "
           "TP rank 0's buffer is published",
           "\nFAILED " + name + "::test_rank_captures_its_tokens[dp0-tp0]",
           "\nFAILED " + name + "::test_rank_captures_its_tokens[dp0-tp1]",
       }) {
    EXPECT_NE(run.out.find(line + "\n"), std::string::npos) << line << "\n---\n" << run.out;
  }
  EXPECT_NE(run.out.find("2 failed, 1 passed in "), std::string::npos) << run.out;
}

// docs/FINDINGS.md #4 as its maintainers would read it: the second micro-batch's token in row 0.
TEST_F(ExportedPytest, MicrobatchOverwriteFailureNamesRankRowAndTokens) {
  R3FUZZ_NEED_TORCH();
  const fs::path module = exported(kSource / "corpus/regression/vllm-50874-wrong-rows-microbatch-overwrite.json");
  const PytestRun run = pytest(module, kVllm50874);
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
  const PytestRun run = pytest(fact, kVllm50874);
  EXPECT_NE(run.out.find("buffer row 0 of dp 0 tp 0 holds token (0, 5), expected token (0, 0) (10 buffer rows wrong)\n"),
            std::string::npos) << run.out;
  const fs::path chunked = exported(kSource / "corpus/regression/vllm-50874-spurious-reject-dp-chunking.json");
  const PytestRun raised = pytest(chunked, kVllm50874);
  EXPECT_NE(raised.out.find("\ndp 0 tp 0: capture raised AssertionError: routed experts have 1 rows; expected 3 "
                            "(all DP ranks), 2 (this DP rank), 2 (sum of local_sizes) (call 1 of 2); the reference "
                            "accepts this step\n"),
            std::string::npos) << raised.out;
}

// SGLang S2 (docs/FINDINGS.md) as its maintainers would read it: the second TBO child's padding
// row, written at row 0 over the first child's token. S5 raises in get_dp_local_slice_cpu.
TEST_F(ExportedPytest, SglangFailuresNameRankPublishedRowAndTokens) {
  R3FUZZ_NEED_TORCH();
  const fs::path tbo = exported(kSource / "corpus/regression/sglang-wrong_rows-tbo-offsets.json");
  const PytestRun run = pytest(tbo, kSglangUpstream);
  EXPECT_EQ(run.exit_code, 1);
  for (const std::string& line : std::vector<std::string>{
           "\npublished row 0 of dp 0 tp 0 (KV slot 1) holds padding row 1 of dp 0, expected token (0, 0) (1 of 1 "
           "published row wrong)",
           "\nFAILED " + tbo.filename().string() + "::test_rank_publishes_its_tokens[dp0-tp0]",
       }) {
    EXPECT_NE(run.out.find(line + "\n"), std::string::npos) << line << "\n---\n" << run.out;
  }
  const fs::path prefill = exported(kSource / "corpus/regression/sglang-spurious_reject-prefill-graph-window.json");
  const PytestRun raised = pytest(prefill, kSglangUpstream);
  EXPECT_NE(raised.out.find("\ndp 1 tp 0: on_forward_end raised TypeError: unsupported operand type(s) for *: 'int' "
                            "and 'NoneType'; the reference accepts this step\n"),
            std::string::npos) << raised.out;
}

// S4 is fixed on sglang-miles: its model runner passes the token bucket, and the same capturer passes.
TEST_F(ExportedPytest, SglangWindowTokenBucketPassesWithMilesRunner) {
  R3FUZZ_NEED_TORCH();
  const fs::path module = exported(kSource / "corpus/regression/sglang-wrong_rows-window-token-bucket.json");
  EXPECT_EQ(pytest(module, kSglangUpstream).exit_code, 1);
  const PytestRun miles = pytest(module, kSglangMiles);
  EXPECT_EQ(miles.exit_code, 0) << miles.out;
}

// The value encoding against the fused shared expert's id (docs/SECURITY.md, "The value encoding
// of exported tests"): SGLang's device buffer is [R, L, K + 1], its last column the shared
// expert's id, EXPERTS. With K = 1 and "experts" set to what token (0, 0)'s value was before the
// values started above every expert id (6: dp 1, 2 layers, 3 rows), a capturer that publishes the
// shared column instead of the routed one passed. It fails now, naming what it published, with
// that "experts" and the smallest (tests/fuzz/export/value_encoding_test.cpp checks all others);
// the fixed sample passes.
TEST_F(ExportedPytest, ACapturerPublishingTheSharedExpertsColumnFails) {
  R3FUZZ_NEED_TORCH();
  // The sample module with one more capturer (the module's own globals are what the test fakes).
  std::string sample = test::read_file_bytes(kSource / "examples/python/sglang_capture_sample.py");
  sample += "\n\nclass SharedColumnCapturer(FixedRoutedExpertsCapturer):\n"
            "    def _get_local_slice(self, forward_batch, can_run_graph, cuda_graph_batch):\n"
            "        return self.device_cache.buffer[: forward_batch.out_cache_loc.shape[0], :, self.top_k:]\n";
  std::ofstream(dir_ / "shared_column_sample.py") << sample;
  const Sample shared{"shared_column_sample:SharedColumnCapturer", "sglang-fixed"};
  const Sample fixed{"shared_column_sample:FixedRoutedExpertsCapturer", "sglang-fixed"};
  for (int experts : {6, 1}) {
    SCOPED_TRACE("experts " + std::to_string(experts));
    const fs::path entry = dir_ / ("shared_" + std::to_string(experts) + ".json");
    std::ofstream(entry) << R"({"format": "r3fuzz-case/1", "engine": "sglang",
 "topology": {"dp": 1, "tp": 1, "dp_attention": false, "a2a": "none"},
 "model": {"layers": 2, "top_k": 1, "experts": )" << experts << R"(}, "forward": "extend", "tokens": [1],
 "tbo": false, "chunked_prefill_size": 3, "max_running_requests": 1, "layer": 1})";
    const fs::path module = exported(entry);
    const PytestRun run = pytest(module, shared);
    EXPECT_EQ(run.exit_code, 1) << run.out;  // was 0 with experts 6: the shared expert's id was token (0, 0)'s value
    EXPECT_NE(run.out.find("\npublished row 0 of dp 0 tp 0 (KV slot 1) holds the fused shared expert's id [" +
                           std::to_string(experts) + "] (no token's value), expected token (0, 0) (1 of 1 published "
                           "row wrong)\n"),
              std::string::npos)
        << run.out;
    if (experts != 6) continue;
    const PytestRun right = pytest(module, fixed);
    EXPECT_EQ(right.exit_code, 0) << right.out;
  }
}

}  // namespace
}  // namespace r3
