// The exported trace module's data lines, the shared and TensorRT-LLM's, for the ring reproducer
// (T7) and the reset (T5); what cannot be exported is an error naming what is wrong.
#include "fuzz/export/trace_pytest_writer.hpp"

#include <gtest/gtest.h>

#include "fuzz/codec/trace_json.hpp"
#include "fuzz/export/trace_target.hpp"

namespace r3 {
namespace {

const std::string kTraces = std::string(R3FUZZ_SOURCE_DIR) + "/corpus/traces/";

Trace trace_file(const std::string& name) {
  auto t = read_trace_file(kTraces + name);
  EXPECT_TRUE(t.ok()) << t.error().message;
  return t.ok() ? *t : Trace{};
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(TracePytestWriter, RingReuseDataLines) {
  auto text = trace_pytest_module(trace_file("regression/trtllm-06a976ce-commit-before-reuse-wrong_route.json"),
                                  {"corpus/t7.json", "", "r3fuzz export corpus/t7.json --pytest"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  const std::string& t = *text;
  EXPECT_EQ(t.rfind("\"\"\"A serving trace of r3fuzz as a pytest module", 0), 0u);
  for (const char* line : {
           "TRACE_FILE = \"corpus/t7.json\"",
           "EXPECT = \"trtllm-06a976ce: wrong_route\"",
           "EXPORT_COMMAND = \"r3fuzz export corpus/t7.json --pytest\"",
           "DEFAULT_ENGINE = \"tensorrt_llm._torch.route_capture:RouteCapture\"",
           "ENGINE = os.environ.get(\"R3FUZZ_ENGINE\") or DEFAULT_ENGINE",
           "LAYERS, TOP_K, EXPERTS = 1, 2, 16",
           "    [1, 2, 3, 4, 5, 6, 7],",
           "PROMPT_LEN = [1]",
           "FORWARDED = [(0, 0, 0), (0, 1, 0), (0, 2, 0), (0, 3, 0), (0, 4, 0), (0, 5, 0)]",
           "    0: [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0)],",
           "MAX_NUM_TOKENS = 8  # model_engine.max_num_tokens: rows a forward holds at most",
           "TOKENS_PER_BLOCK = 1",
           "FINAL_LEN = [7]  # S: the tokens a request holds when it finishes (prompt and kept outputs)",
           "    {\"events\": [], \"attach_before\": [],",
           "     \"context\": [(0, 0, 1)], \"generation\": [], \"dummies\": 0, \"version\": 0, \"attach\": []},",
           "     \"context\": [], \"generation\": [(0, 5)], \"dummies\": 0, \"version\": 0, \"attach\": [0]},",
           "# in order: its own step). A forced drain or a synchronize lands it at once.",
           "COPY_SEEN = [0, 1, 5, 5, 5, 5]",
       }) {
    EXPECT_TRUE(has_line(t, line)) << "missing line: " << line;
  }
  EXPECT_NE(t.find("\ndef route_experts(prefix_hash, layer, version, top_k, experts):\n"), std::string::npos);
  EXPECT_NE(t.find("\ndef serve(module, cls):\n"), std::string::npos);
  EXPECT_NE(t.find("\ndef test_request_gets_its_routes(served, req):\n"), std::string::npos);
}

// A flushing weight update is reset_prefix_cache; the hit sets prepopulated_prompt_len; the
// second forward runs at version 1, and request 2's prefix rows must be version 1's.
TEST(TracePytestWriter, ResetAndHitDataLines) {
  auto text = trace_pytest_module(trace_file("regression/trtllm-shared-cache-epoch-wrong_route.json"),
                                  {"t5.json", "", "r3fuzz export t5.json --pytest"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  for (const char* line : {
           "    {\"events\": [(\"reset_prefix_cache\",)], \"attach_before\": [],",
           "     \"context\": [(1, 0, 3)], \"generation\": [(0, 3)], \"dummies\": 0, \"version\": 1, \"attach\": [1, 0]},",
           "    {\"events\": [(\"hit\", 2, 2)], \"attach_before\": [],",
           "     \"context\": [(2, 2, 3)], \"generation\": [], \"dummies\": 0, \"version\": 1, \"attach\": [2]},",
           "    2: [(0, 1), (1, 1), (2, 1)],",
           "COPY_SEEN = [0, 1, 2]",
       }) {
    EXPECT_TRUE(has_line(*text, line)) << "missing line: " << line << "\n" << *text;
  }
}

// SGLang: each DP rank's rows with whether their KV may be reused, the copies record as
// done_before_step, and E = 1 widened so that every route the trace computes is told apart.
TEST(TracePytestWriter, SglangCopyLateDataLines) {
  auto text = trace_pytest_module(trace_file("regression/sglang-copy-late-wrong_route.json"),
                                  {"l5.json", "", "r3fuzz export l5.json --pytest"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  for (const char* line : {
           "DEFAULT_ENGINE = \"sglang.srt.state_capturer.routed_experts:RoutedExpertsCapturer\"",
           "LAYERS, TOP_K, EXPERTS = 1, 1, 64",
           "# The trace's model has 1 experts, too few to tell every route its forwards compute apart (a misplaced row could",
           "# pass): the test draws expert ids from 64, the fewest that tell them all apart.",
           "DP, TP, OVERLAP = 1, 1, True",
           "DEVICE_ROWS = 3  # the device cache's rows: the most a forward captures",
           "HOST_SLOTS = 7  # KV slots: 0 is the dummy slot, then one per row a rank forwards",
           "     \"ranks\": [{\"rows\": [(1, 0, True), (1, 1, True)], \"padding\": 0}],",
           "     \"collect\": [1]},",
           "COPY_DONE = [2, 2, 3]",
       }) {
    EXPECT_TRUE(has_line(*text, line)) << "missing line: " << line << "\n" << *text;
  }
}

// A trace whose finding lives outside the capturer the SGLang harness drives is refused, saying why.
TEST(TracePytestWriter, SglangRefusesWhatItsCapturerCannotShow) {
  auto spec = trace_pytest_module(trace_file("regression/sglang-tree-accept-rows-wrong_route.json"), {"t.json", "", ""});
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().message, "config.spec: speculative decoding moves KV in the worker, not in the capturer");
  auto pd = trace_pytest_module(trace_file("regression/sglang-pd-prompt-rows-wrong_route.json"), {"t.json", "", ""});
  ASSERT_FALSE(pd.ok());
  EXPECT_EQ(pd.error().message,
            "steps[0].events[0]: pd_handoff: the SGLang trace harness drives the capturer only, and this KV move is "
            "the memory pool's or the scheduler's");
}

TEST(TracePytestWriter, EngineOverrideIsCheckedAndShown) {
  const Trace t = trace_file("regression/trtllm-06a976ce-inclusive-range-short_output.json");
  auto text = trace_pytest_module(t, {"t1.json", "pkg.mod:Cls", "r3fuzz export t1.json --pytest --engine pkg.mod:Cls"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_TRUE(has_line(*text, "DEFAULT_ENGINE = \"pkg.mod:Cls\""));
  auto bad = trace_pytest_module(t, {"t1.json", "pkg.mod", ""});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "--engine pkg.mod: expected MODULE:CLASS, got no ':'");
}

// An engine with no trace export part is named, never a crash or an empty file.
TEST(TracePytestWriter, AnEngineWithoutATraceExportPartIsAnError) {
  const Trace t = trace_file("production/mooncake-excerpt-vllm-1.json");
  ASSERT_EQ(engine_trace_export(t.engine), nullptr);
  auto text = trace_pytest_module(t, {"v.json", "", ""});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message,
            "engine " + std::string(t.engine.name()) + ": r3fuzz cannot export its traces (the engine has no trace export part)");
}

}  // namespace
}  // namespace r3
