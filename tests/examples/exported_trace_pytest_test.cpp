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

// The sample engine (examples/python) of each trace implementation, as the environment selects
// it: R3FUZZ_ENGINE names the class; for SGLang, R3FUZZ_SIZING the device cache that version's
// __init__ allocates and R3FUZZ_SGLANG_VERSION what its model runner passes the window under DP
// attention (sglang-miles: bs * captured_req_width).
const std::map<std::string, std::string> kSamples = {
    {"trtllm-06a976ce", "R3FUZZ_ENGINE=trtllm_route_capture_sample:RouteCapture06a976ce"},
    {"trtllm", "R3FUZZ_ENGINE=trtllm_route_capture_sample:RouteCapture"},
    {"trtllm-fixed", "R3FUZZ_ENGINE=trtllm_route_capture_sample:FixedRouteCapture"},
    {"sglang", "R3FUZZ_ENGINE=sglang_capture_sample:RoutedExpertsCapturer"},
    {"sglang-miles",
     "R3FUZZ_ENGINE=sglang_capture_sample:RoutedExpertsCapturer R3FUZZ_SIZING=sglang-miles R3FUZZ_SGLANG_VERSION=miles"},
    {"sglang-fixed", "R3FUZZ_ENGINE=sglang_capture_sample:FixedRoutedExpertsCapturer R3FUZZ_SIZING=sglang-fixed"},
    {"vllm-50874", "R3FUZZ_ENGINE=vllm_aux_output_sample:AuxOutputWorkerConnector"},
    {"vllm", "R3FUZZ_ENGINE=vllm_aux_output_sample:AuxOutputWorkerConnector"},  // its current release
    // vLLM's fixed model (r3-fixed) keys rows by KV slot; its sample is the AuxOutput connector with
    // the fixes of L7, L8 and L10, which returns the same truth.
    {"r3-fixed", "R3FUZZ_ENGINE=vllm_aux_output_sample:FixedAuxOutputWorkerConnector"},
};
// The fixed sample of each engine with samples.
const std::map<std::string, std::string> kFixed = {
    {"trtllm", "trtllm-fixed"}, {"sglang", "sglang-fixed"}, {"vllm", "r3-fixed"}};

const std::string kAsyncRefusal =
    "config.overlap: under async scheduling vLLM's engine core runs the scheduler a step ahead of the worker's output; "
    "the vLLM trace harness drives the connector synchronously";

// The entries the trace exports refuse, each with why. SGLang's findings live in the speculative
// worker, the P/D hand-off or the memory pool, not in the capturer it drives
// (fuzz/engines/sglang/trace_export.cpp); vLLM's harness drives the connector synchronously, and
// the releases before it not at all (fuzz/engines/vllm/trace_export.cpp).
const std::map<std::string, std::string> kRefused = {
    {"vllm-copy-late-pass.json", kAsyncRefusal},
    {"mooncake-excerpt-vllm-3.json", kAsyncRefusal},
    {"mooncake-excerpt-vllm-4.json", kAsyncRefusal},
    {"vllm-pre-50874-preempted-rows-wrong_route.json",
     "profile vllm-legacy: the export drives vLLM main's AuxOutput connector; the releases before it keep a "
     "slot-keyed buffer (Scheduler._get_routed_experts), which has no harness"},
    {"sglang-ngram-overlap-capture-wrong_route.json",
     "config.spec_algorithm: ngram under the overlap scheduler: whether NGRAM's forwards hand their capture on is "
     "the worker's (speculative/ngram_worker.py, NGRAMWorker.forward_batch_generation), not the capturer's"},
    {"sglang-offload-rows-wrong_route.json", "config.pd_router: the P/D hand-off is the scheduler's, not the capturer's"},
    {"sglang-pd-prompt-rows-wrong_route.json",
     "steps[0].events[0]: pd_handoff: the SGLang trace harness drives the capturer only, and this KV move is the "
     "memory pool's or the scheduler's"},
    {"sglang-tree-accept-rows-wrong_route.json",
     "steps[2].run[0]: a tree verify that accepts 1 of 3 drafts: the worker moves the accepted path's KV "
     "(eagle_worker_common.py, _finalize_accept_tree_path; spec_utils.py, move_accept_tokens_to_target_kvcache), not "
     "the capturer"},
};

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

  // True when the entry is one the export refuses (kRefused), its refusal checked word for word.
  bool refused(const fs::path& entry) {
    const auto why = kRefused.find(entry.filename().string());
    if (why == kRefused.end()) return false;
    const auto run = test::run_binary(R3FUZZ_BINARY, {"export", entry.string(), "--pytest"}, dir_);
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_EQ(run.err.rfind("r3fuzz export: " + why->second + "\n", 0), 0u) << run.err;
    return true;
  }

  // `sample`: the environment that selects it (kSamples).
  PytestRun pytest(const fs::path& module, const std::string& sample) {
    const std::string cmd = "cd '" + dir_.string() + "' && COLUMNS=400 PYTHONPATH='" + (kSource / "examples/python").string() +
                            "' " + sample + " " + torch_python() +
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
  ASSERT_GE(found.size(), 24u);  // TensorRT-LLM: T1 to T7; SGLang: 9; vLLM: 8
  int ran = 0;
  for (const auto& [entry, t] : found) {
    SCOPED_TRACE(entry.filename().string());
    ASSERT_TRUE(t.expect);
    if (refused(entry)) continue;
    ++ran;
    ASSERT_TRUE(kSamples.count(t.expect->impl)) << t.expect->impl;
    const fs::path module = exported(entry);
    const PytestRun bug = pytest(module, kSamples.at(t.expect->impl));
    EXPECT_EQ(bug.exit_code, t.expect->verdict == "pass" ? 0 : 1) << bug.out;  // pytest: 1 = some tests failed
    const PytestRun fixed = pytest(module, kSamples.at(kFixed.at(std::string(t.engine.name()))));
    EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
    EXPECT_NE(fixed.out.find(" passed in "), std::string::npos) << fixed.out;
  }
  EXPECT_EQ(ran, 18);  // 7 TensorRT-LLM; 5 SGLang (the copy to host, the capture under DP attention and spec);
                       // 6 vLLM (L7 twice, L8, L10, the evicted block that passes, and drafts)
}

TEST_F(ExportedTracePytest, EveryProductionEntryDoesWhatItsExpectSays) {
  R3FUZZ_NEED_TORCH();
  const auto found = entries(kTraces / "production");
  ASSERT_GE(found.size(), 11u);  // TensorRT-LLM's unit tests, SGLang's and vLLM's mooncake excerpts
  int ran = 0;
  for (const auto& [entry, t] : found) {
    SCOPED_TRACE(entry.filename().string());
    if (refused(entry)) continue;
    ++ran;
    const fs::path module = exported(entry);
    // No "expect": every released version passes it (r3fuzz replay says so).
    const std::string impl = t.expect ? t.expect->impl : std::string(t.engine.name());
    const PytestRun version = pytest(module, kSamples.at(impl));
    EXPECT_EQ(version.exit_code, !t.expect || t.expect->verdict == "pass" ? 0 : 1) << version.out;
    const PytestRun fixed = pytest(module, kSamples.at(kFixed.at(std::string(t.engine.name()))));
    EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
  }
  EXPECT_EQ(ran, 9);  // 3 TensorRT-LLM, 4 SGLang, 2 vLLM (synchronous)
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
  // SGLang's L5: step 0's deferred copy runs after step 1's forward and reads its rows through the view.
  const fs::path late = exported(kTraces / "regression/sglang-copy-late-wrong_route.json");
  const PytestRun view = pytest(late, kSamples.at("sglang"));
  EXPECT_NE(view.out.find("\nrequest 0 position 0 holds the route of request 1 position 0 at weight version 0, "
                          "expected the route at weight version 0 (2 of 4 rows wrong)\n"),
            std::string::npos) << view.out;
  // The sample of E swallows the error: the request comes back without routes.
  const PytestRun swallowed = pytest(gap, kSamples.at("trtllm-06a976ce"));
  EXPECT_NE(swallowed.out.find("\nrequest 1 finished without routed_experts, expected 5 rows\n"), std::string::npos)
      << swallowed.out;
}

// SGLang under DP attention and speculative decoding: each forward laid out as the per-step model
// lays it out, so the trace test meets the per-step findings where a request's routes show them.
// The window of a verify replay starts at rank * bs upstream (the decode bucket in requests) and
// at rank * bs * captured_req_width on sglang-miles, which model and sample both pass; a DP-gathered
// verify of 8 rows overflows upstream's device cache of max(cps, mrr) * dp = 6 rows.
TEST_F(ExportedTracePytest, SglangCaptureUnderDpAttentionFollowsTheVersion) {
  R3FUZZ_NEED_TORCH();
  const fs::path window = exported(kTraces / "regression/sglang-step-capture-wrong_route.json");
  const PytestRun upstream = pytest(window, kSamples.at("sglang"));
  EXPECT_EQ(upstream.exit_code, 1);
  EXPECT_NE(upstream.out.find("\nrequest 0 position 1 holds a padding row, expected the route at weight version 0 "
                              "(1 of 2 rows wrong)\n"),
            std::string::npos) << upstream.out;
  const PytestRun miles = pytest(window, kSamples.at("sglang-miles"));
  EXPECT_EQ(miles.exit_code, 0) << miles.out;
  const fs::path overflow = exported(kTraces / "regression/sglang-step-capture-crash.json");
  const PytestRun crash = pytest(overflow, kSamples.at("sglang"));
  EXPECT_EQ(crash.exit_code, 1);
  EXPECT_NE(crash.out.find("\nrequest 0 never finished: the serving run stopped at step 1: dp 0's capture raised "
                           "RuntimeError: The expanded size of the tensor (6) must match the existing size (8) at "
                           "non-singleton dimension 0."),
            std::string::npos) << crash.out;
}

// vLLM main's AuxOutput connector through a trace: L7's mixed block (one put keeps the last object
// of a key, request 1's in Model Runner V2's order) and L10's store, one object per KV block, that
// cannot retain what the requests hold; the fixed sample returns the truth on both.
TEST_F(ExportedTracePytest, VllmConnectorFailuresReadAsTheModelSays) {
  R3FUZZ_NEED_TORCH();
  const fs::path mixed = exported(kTraces / "regression/vllm-generation-on-weight-update-mixed-block-wrong_route.json");
  const PytestRun upstream = pytest(mixed, kSamples.at("vllm-50874"));
  EXPECT_EQ(upstream.exit_code, 1);
  EXPECT_NE(upstream.out.find("\nrequest 0 position 4 holds the route of request 1 position 4 at weight version 1, "
                              "expected the route at weight version 0 (3 of 8 rows wrong)\n"),
            std::string::npos) << upstream.out;
  const fs::path capacity = exported(kTraces / "regression/vllm-store-capacity-crash.json");
  const PytestRun crash = pytest(capacity, kSamples.at("vllm-50874"));
  EXPECT_EQ(crash.exit_code, 1);
  EXPECT_NE(crash.out.find("\nrequest 4 never finished: the serving run stopped at step 12: process_output raised "
                           "BlockObjectStoreError: the store cannot retain the batch: limit=21 objects\n"),
            std::string::npos) << crash.out;
  EXPECT_EQ(pytest(capacity, kSamples.at("r3-fixed")).exit_code, 0);
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
