// The exported trace module's shared data lines (the engines' own are tested in
// tests/fuzz/engines/NAME/trace_export_test.cpp); what cannot be exported is an error naming what
// is wrong.
#include "fuzz/export/trace_pytest_writer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fuzz/codec/trace_json.hpp"
#include "fuzz/export/trace_target.hpp"
#include "reference/engine.hpp"

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
       }) {
    EXPECT_TRUE(has_line(t, line)) << "missing line: " << line;
  }
  EXPECT_NE(t.find("\ndef route_experts(prefix_hash, layer, version, top_k, experts):\n"), std::string::npos);
  EXPECT_NE(t.find("\ndef serve(module, cls):\n"), std::string::npos);
  EXPECT_NE(t.find("\ndef test_request_gets_its_routes(served, req):\n"), std::string::npos);
}

// E = 1 widened so that every route the trace computes is told apart; the engine's data lines
// follow the shared ones.
TEST(TracePytestWriter, ATooSmallExpertCountIsWidened) {
  auto text = trace_pytest_module(trace_file("regression/sglang-copy-late-wrong_route.json"),
                                  {"l5.json", "", "r3fuzz export l5.json --pytest"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  for (const char* line : {
           "DEFAULT_ENGINE = \"sglang.srt.state_capturer.routed_experts:RoutedExpertsCapturer\"",
           "LAYERS, TOP_K, EXPERTS = 1, 1, 64",
           "# The trace's model has E = 1, too few to tell every route its forwards compute apart (a misplaced row",
           "# could pass): the test draws expert ids from 64, the fewest that tell them all apart.",
           "COPY_DONE = [2, 2, 3]",
       }) {
    EXPECT_TRUE(has_line(*text, line)) << "missing line: " << line << "\n" << *text;
  }
}

// A trace of 65 prefills of 65536 tokens forwards 65 * 65536 rows, one past the bound: refused
// before any module text is built (a few such extends would otherwise write gigabytes).
TEST(TracePytestWriter, ATraceForwardingMoreRowsThanTheBoundIsRefused) {
  nlohmann::json doc = nlohmann::json::parse(
      R"({"format": "r3fuzz-trace/1", "engine": "sglang", "profile": "sglang", "topology": {"dp": 1, "tp": 1},
          "model": {"layers": 1, "top_k": 1, "experts": 8},
          "config": {"token_budget": 65536, "chunk": -1, "page": 1, "kv_slots": 1048576, "prefix_cache": false,
                     "overlap": false, "spec": null, "cuda_graph": {}}, "requests": [], "steps": []})");
  std::vector<int> prompt(65536);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int>(i) + 1;
  for (int r = 0; r < 65; ++r) {
    doc["requests"].push_back({{"id", r}, {"dp", 0}, {"prompt", prompt}, {"outputs", {5}}, {"finish", "length"}});
    doc["steps"].push_back({{"run", {{{"req", r}, {"extend", {0, 65536}}}}}});
  }
  auto t = trace_from_json(doc);
  ASSERT_TRUE(t.ok()) << t.error().message;
  auto text = trace_pytest_module(*t, {"big.json", "", ""});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message, "the trace forwards 4259840 rows; an exported test lists at most 4194304 (kMaxExportEntries)");
}

// An engine part's refusal reaches the caller as it is.
TEST(TracePytestWriter, AnEnginePartsRefusalIsTheError) {
  auto spec = trace_pytest_module(trace_file("regression/sglang-tree-accept-rows-wrong_route.json"), {"t.json", "", ""});
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().message,
            "steps[2].run[0]: a tree verify that accepts 1 of 3 drafts: the worker moves the accepted path's KV "
            "(eagle_worker_common.py, _finalize_accept_tree_path; spec_utils.py, move_accept_tokens_to_target_kvcache), "
            "not the capturer");
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

// An engine with no trace export part is named, never a crash or an empty file. Every built-in
// engine with a lifecycle has one now; vllm-ascend (no lifecycle model, so no traces of its own)
// stands for an engine a plug-in adds without one.
TEST(TracePytestWriter, AnEngineWithoutATraceExportPartIsAnError) {
  Trace t = trace_file("production/mooncake-excerpt-vllm-1.json");
  t.engine = *parse_engine("ascend");
  ASSERT_EQ(engine_trace_export(t.engine), nullptr);
  auto text = trace_pytest_module(t, {"v.json", "", ""});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message,
            "engine " + std::string(t.engine.name()) + ": r3fuzz cannot export its traces (the engine has no trace export part)");
}

}  // namespace
}  // namespace r3
