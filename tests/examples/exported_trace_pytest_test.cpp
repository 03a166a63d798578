// `r3fuzz export TRACE --pytest` for every trace corpus entry of an engine with a trace export
// part, run by real pytest on real torch against the project's sample engines: a regression
// entry fails on the sample with its bug and passes on the fixed sample; a production entry does
// what its "expect" says on that version's sample and passes on the fixed one (issue 30, part 3).
// The module's route hash gives the C++ reference's values, and a failure reads word for word.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/codec/trace_json.hpp"
#include "reference/trace/route.hpp"
#include "tests/examples/torch_python.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace r3 {
namespace {

namespace fs = std::filesystem;
using test::torch_python;

const fs::path kSource = R3FUZZ_SOURCE_DIR;
const fs::path kTraces = kSource / "corpus/traces";

// The sample engine (examples/python) of each trace implementation, as R3FUZZ_ENGINE names it.
const std::map<std::string, std::string> kSamples = {
    {"trtllm-06a976ce", "trtllm_route_capture_sample:RouteCapture06a976ce"},
    {"trtllm", "trtllm_route_capture_sample:RouteCapture"},
    {"trtllm-fixed", "trtllm_route_capture_sample:FixedRouteCapture"},
};
// The fixed sample of each engine with samples.
const std::map<std::string, std::string> kFixed = {{"trtllm", "trtllm-fixed"}};

struct PytestRun {
  int exit_code = -1;
  std::string out;
};

class ExportedTracePytest : public ::testing::Test {
 protected:
  fs::path exported(const fs::path& entry) {
    const fs::path file = dir_ / ("test_" + entry.stem().string() + ".py");
    const auto run = test::run_binary(R3FUZZ_BINARY, {"export", entry.string(), "--pytest", "--out", file.string()}, dir_);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, "wrote " + file.string() + "; run it: pytest " + file.string() + "\n");
    return file;
  }

  PytestRun pytest(const fs::path& module, const std::string& engine) {
    const std::string cmd = "cd '" + dir_.string() + "' && COLUMNS=400 PYTHONPATH='" + (kSource / "examples/python").string() +
                            "' R3FUZZ_ENGINE=" + engine + " " + torch_python() +
                            " -m pytest -q -rf -p no:cacheprovider '" + module.string() + "' >pytest.out 2>&1";
    const int status = std::system(cmd.c_str());
    return {test::exit_code_of_wait_status(status), test::read_file_bytes(dir_ / "pytest.out")};
  }

  // Every entry of `folder` whose engine has samples, with its trace.
  std::vector<std::pair<fs::path, Trace>> entries(const fs::path& folder) {
    std::vector<std::pair<fs::path, Trace>> out;
    for (const auto& e : fs::directory_iterator(folder)) {
      if (e.path().extension() != ".json") continue;
      auto t = read_trace_file(e.path().string());
      EXPECT_TRUE(t.ok()) << e.path() << ": " << t.error().message;
      if (t.ok() && kFixed.count(std::string(t->engine.name()))) out.emplace_back(e.path(), *t);
    }
    return out;
  }

  const test::ScratchDir scratch_{"r3fuzz-exported-trace-pytest"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(ExportedTracePytest, EveryRegressionEntryFailsOnItsBugAndPassesOnTheFix) {
  R3FUZZ_NEED_TORCH();
  const auto found = entries(kTraces / "regression");
  ASSERT_GE(found.size(), 7u);  // TensorRT-LLM: T1 to T7
  for (const auto& [entry, t] : found) {
    SCOPED_TRACE(entry.filename().string());
    ASSERT_TRUE(t.expect);
    ASSERT_TRUE(kSamples.count(t.expect->impl)) << t.expect->impl;
    const fs::path module = exported(entry);
    const PytestRun bug = pytest(module, kSamples.at(t.expect->impl));
    EXPECT_EQ(bug.exit_code, t.expect->verdict == "pass" ? 0 : 1) << bug.out;  // pytest: 1 = some tests failed
    const PytestRun fixed = pytest(module, kSamples.at(kFixed.at(std::string(t.engine.name()))));
    EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
    EXPECT_NE(fixed.out.find(" passed in "), std::string::npos) << fixed.out;
  }
}

TEST_F(ExportedTracePytest, EveryProductionEntryDoesWhatItsExpectSays) {
  R3FUZZ_NEED_TORCH();
  const auto found = entries(kTraces / "production");
  ASSERT_GE(found.size(), 3u);  // TensorRT-LLM's unit tests
  for (const auto& [entry, t] : found) {
    SCOPED_TRACE(entry.filename().string());
    ASSERT_TRUE(t.expect);
    const fs::path module = exported(entry);
    const PytestRun version = pytest(module, kSamples.at(t.expect->impl));
    EXPECT_EQ(version.exit_code, t.expect->verdict == "pass" ? 0 : 1) << version.out;
    const PytestRun fixed = pytest(module, kSamples.at(kFixed.at(std::string(t.engine.name()))));
    EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
  }
}

// T7 (docs/FINDINGS.md) as TensorRT-LLM's maintainers would read it, and the raise of T6 at L.
TEST_F(ExportedTracePytest, FailuresNameTheRowAndWhatItHolds) {
  R3FUZZ_NEED_TORCH();
  const fs::path ring = exported(kTraces / "regression/trtllm-06a976ce-commit-before-reuse-wrong_route.json");
  const PytestRun run = pytest(ring, kSamples.at("trtllm-06a976ce"));
  EXPECT_EQ(run.exit_code, 1);
  for (const std::string& line : std::vector<std::string>{
           "\nrequest 0 position 2 holds the route of request 0 position 5 at weight version 0, expected the route at "
           "weight version 0 (1 of 5 rows wrong)",
           "\nFAILED " + ring.filename().string() + "::test_request_gets_its_routes[request0]",
       }) {
    EXPECT_NE(run.out.find(line + "\n"), std::string::npos) << line << "\n---\n" << run.out;
  }
  const fs::path gap = exported(kTraces / "regression/trtllm-cache-every-row-crash.json");
  const PytestRun raised = pytest(gap, kSamples.at("trtllm"));
  EXPECT_NE(raised.out.find("\nrequest 1: attach_routes raised ValueError: request 1 has no row at position 2, below "
                            "its highest stored position 4; the serving run fails\n"),
            std::string::npos) << raised.out;
  // The sample of E swallows the error: the request comes back without routes.
  const PytestRun swallowed = pytest(gap, kSamples.at("trtllm-06a976ce"));
  EXPECT_NE(swallowed.out.find("\nrequest 1 finished without routed_experts, expected 5 rows\n"), std::string::npos)
      << swallowed.out;
}

// The module's prefix_hashes and route_experts (fuzz/export/trace_route_python.hpp) against the
// reference's (reference/trace/route.hpp), on exact values: tokens past int32's sign bit, layers,
// versions and K up to E, where the step past repeats matters.
TEST_F(ExportedTracePytest, RouteHashAgreesWithTheReference) {
  R3FUZZ_NEED_TORCH();
  const fs::path module = exported(kTraces / "production/trtllm-unittest-assemble-three-positions.json");
  const std::vector<int32_t> tokens = {0, 1, -1, 2147483647, -2147483647 - 1, 151643, 7};
  const std::vector<uint64_t> hashes = prefix_hashes(tokens);
  std::string script = "import importlib.util\nspec = importlib.util.spec_from_file_location('m', '" + module.string() +
                       "')\nm = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(m)\nh = m.prefix_hashes([";
  for (int32_t token : tokens) script += std::to_string(token) + ", ";
  script += "])\nprint(' '.join(str(x) for x in h))\n";
  std::string expected;
  for (uint64_t h : hashes) expected += (expected.empty() ? "" : " ") + std::to_string(h);
  expected += "\n";
  const std::vector<std::tuple<int, int, int, int>> routes = {{0, 0, 2, 16}, {3, 1, 8, 8}, {61, 65535, 6, 7}, {1, 2, 1, 1}};
  for (const auto& [layer, version, top_k, experts] : routes) {
    for (uint64_t h : hashes) {
      script += "print(m.route_experts(" + std::to_string(h) + ", " + std::to_string(layer) + ", " +
                std::to_string(version) + ", " + std::to_string(top_k) + ", " + std::to_string(experts) + "))\n";
      expected += "[";
      const std::vector<int32_t> e = route_experts(h, layer, version, top_k, experts);
      for (size_t i = 0; i < e.size(); ++i) expected += (i ? ", " : "") + std::to_string(e[i]);
      expected += "]\n";
    }
  }
  std::ofstream(dir_ / "hash_check.py") << script;
  const std::string cmd = "cd '" + dir_.string() + "' && " + torch_python() + " hash_check.py >hash.out 2>&1";
  EXPECT_EQ(test::exit_code_of_wait_status(std::system(cmd.c_str())), 0) << test::read_file_bytes(dir_ / "hash.out");
  EXPECT_EQ(test::read_file_bytes(dir_ / "hash.out"), expected);
}

}  // namespace
}  // namespace r3
