// The exported module's data part, line by line, for the micro-batch reproducer; data texts go
// through the one escape; what cannot be exported is an error, never a wrong file.
#include "fuzz/export/pytest_writer.hpp"

#include <gtest/gtest.h>

#include "fuzz/codec/case_json.hpp"

namespace r3 {
namespace {

const std::string kRegression = std::string(R3FUZZ_SOURCE_DIR) + "/corpus/regression/";

Case regression_case(const std::string& name) {
  auto c = read_case_file(kRegression + name);
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? *c : Case{};
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(PytestWriter, MicrobatchOverwriteDataLines) {
  auto text = pytest_module(regression_case("vllm-50874-wrong-rows-microbatch-overwrite.json"),
                            {"corpus/x.json", "", "r3fuzz export corpus/x.json --pytest"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  const std::string& t = *text;
  EXPECT_EQ(t.rfind("\"\"\"A finding of r3fuzz as a pytest module", 0), 0u);
  for (const char* line : {
           "CASE_FILE = \"corpus/x.json\"",
           "EXPECT = \"vllm-50874: wrong_rows (failure)\"",
           "EXPORT_COMMAND = \"r3fuzz export corpus/x.json --pytest\"",
           "DEFAULT_ENGINE = \"vllm.model_executor.layers.fused_moe.routed_experts_capturer:RoutedExpertsCapturer\"",
           "ENGINE = os.environ.get(\"R3FUZZ_ENGINE\") or DEFAULT_ENGINE",
           "SIZINGS = {\"vllm-50874\": (2, None), \"vllm-pre-50874\": (2, None), \"r3-fixed\": (2, None)}",
           "SIZING = os.environ.get(\"R3FUZZ_SIZING\") or \"vllm-50874\"",
           "DP, TP, LAYERS, TOP_K, LAYER = 2, 1, 1, 1, 0",
           "NUM_TOKENS = [2, 2]  # n_d: the rows each DP rank runs with",
           "SPAN_R = 2  # more than any row index below",
           "EXPERTS, SHARED_EXPERTS = 8, 1  # expert ids: routed 0 .. EXPERTS - 1, then the fused shared experts'",
           "BASE = 9  # every routing value below is at least BASE: no expert id, no fill value (-1, 0) is one",
           "REJECTION = None",
           "    [(\"token\", 0, 1, 1)],",
           "    {\"index\": 1, \"row_offset\": 1, \"chunk_size\": None, \"num_tokens_across_dp\": [1, 1], "
           "\"local_sizes\": [1, 1], \"kernel_rows\": 0,",
           "     \"received\": [2, 3], \"tp_gather\": [-1, -1]},",
           "    (1, 0): [(0, \"token\", 1, 0, 1), (1, \"token\", 1, 1, 1)],",
       }) {
    EXPECT_TRUE(has_line(t, line)) << "missing line: " << line;
  }
  EXPECT_NE(t.find("def test_rank_captures_its_tokens(engine, monkeypatch, dp, tp):"), std::string::npos);
}

// An SGLang case gets SGLang's capturer, sizings (device rows, DeepEP gather rows) and forward end.
TEST(PytestWriter, SglangTboDataLines) {
  auto text = pytest_module(regression_case("sglang-wrong_rows-tbo-offsets.json"),
                            {"corpus/s2.json", "", "r3fuzz export corpus/s2.json --pytest"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  const std::string& t = *text;
  for (const char* line : {
           "DEFAULT_ENGINE = \"sglang.srt.state_capturer.routed_experts:RoutedExpertsCapturer\"",
           "SIZINGS = {\"sglang\": (1, 1), \"sglang-miles\": (1, 1), \"sglang-fixed\": (2, 2)}",
           "SIZING = os.environ.get(\"R3FUZZ_SIZING\") or \"sglang\"",
           "A2A = \"deepep\"  # --moe-a2a-backend",
           "    {\"index\": 1, \"received\": [1], \"tp_gather\": [-1],",
           "     \"dp_local_start\": [0], \"dp_local_num_tokens\": [1], \"batch_offset\": [1]},",
           "FORWARD_END = {\"global_num_tokens_cpu\": [1], \"out_cache_loc\": [1], \"can_run_graph\": True,",
           "               \"runner_bs\": [2], \"captured_req_width\": 1}",
           "    (0, 0): [(0, \"token\", 0, 0, 1)],",
       }) {
    EXPECT_TRUE(has_line(t, line)) << "missing line: " << line;
  }
  EXPECT_NE(t.find("def test_rank_publishes_its_tokens(engine, monkeypatch, dp, tp):"), std::string::npos);
  EXPECT_EQ(t.find("MONOLITHIC"), std::string::npos);  // vLLM's data stays vLLM's
}

// The values start above every id a capturer holds of its own accord: SGLang appends the fused
// shared expert's id (EXPERTS) to every tensor, and with K = 1 and "experts" 6 that id was token
// (0, 0)'s value ((1 * SPAN_A + 0) * SPAN_R * TOP_K = 2 * 3), so publishing it passed.
TEST(PytestWriter, SglangValuesStartAboveTheSharedExpertsId) {
  auto c = case_from_json_text(R"({"format": "r3fuzz-case/1", "engine": "sglang",
 "topology": {"dp": 1, "tp": 1, "dp_attention": false, "a2a": "none"},
 "model": {"layers": 2, "top_k": 1, "experts": 6}, "forward": "extend", "tokens": [1],
 "tbo": false, "chunked_prefill_size": 3, "max_running_requests": 1, "layer": 1})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto text = pytest_module(*c, {"s.json", "", "cmd"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  for (const char* line : {
           "DP, TP, LAYERS, TOP_K, LAYER = 1, 1, 2, 1, 1",
           "SPAN_R = 3  # more than any row index below",
           "EXPERTS, SHARED_EXPERTS = 6, 1  # expert ids: routed 0 .. EXPERTS - 1, then the fused shared experts'",
           "BASE = 7  # every routing value below is at least BASE: no expert id, no fill value (-1, 0) is one",
           "    base = BASE + ((KIND_CODES[kind] * SPAN_A + a) * SPAN_R + index) * TOP_K",
           "    routed = (BASE + (layer * SPAN_R + row) * TOP_K + k).to(torch.int32)",
           "    shared = torch.arange(EXPERTS, EXPERTS + SHARED_EXPERTS, dtype=torch.int32)",
       }) {
    EXPECT_TRUE(has_line(*text, line)) << "missing line: " << line;
  }
  EXPECT_EQ(text->find("\nSHARED_EXPERTS = "), std::string::npos);  // one definition, in the data
}

TEST(PytestWriter, DataTextsStayStringLiterals) {
  Case c = regression_case("vllm-50874-wrong-rows-microbatch-overwrite.json");
  c.note = "end\"\"\"\nimport os; os.system('x')  # \\";
  auto text = pytest_module(c, {"we'ird\n\"name\".json", "pkg.mod:Cls", "cmd"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_TRUE(has_line(*text, "NOTE = \"end\\\"\\\"\\\"\\nimport os; os.system('x')  # \\\\\""));
  EXPECT_TRUE(has_line(*text, "CASE_FILE = \"we'ird\\n\\\"name\\\".json\""));
  EXPECT_TRUE(has_line(*text, "DEFAULT_ENGINE = \"pkg.mod:Cls\""));
  EXPECT_EQ(text->find("\nimport os;"), std::string::npos);
}

TEST(PytestWriter, AnEngineSpecMustBeModuleColonClass) {
  const Case c = regression_case("vllm-50874-wrong-rows-microbatch-overwrite.json");
  for (const auto& [spec, why] : std::vector<std::pair<std::string, std::string>>{
           {"pkg.mod", "--engine pkg.mod: expected MODULE:CLASS, got no ':'"},
           {"pkg.mod:Cls()", "--engine pkg.mod:Cls(): the class after ':' must be a Python name (letters, digits, _)"},
           {"pkg..mod:Cls", "--engine pkg..mod:Cls: the module before ':' must be a dotted Python name (a.b.c)"},
           {"os;x:Cls", "--engine os;x:Cls: the module before ':' must be a dotted Python name (a.b.c)"}}) {
    auto text = pytest_module(c, {"f.json", spec, "cmd"});
    ASSERT_FALSE(text.ok()) << spec;
    EXPECT_EQ(text.error().message, why);
  }
}

TEST(PytestWriter, AStepTooLargeForDistinctInt32ValuesIsRefused) {
  Case c = regression_case("vllm-50874-wrong-rows-microbatch-overwrite.json");
  c.max_num_tokens = int64_t{1} << 24;
  c.model.top_k = 64;
  c.model.experts = 64;
  auto text = pytest_module(c, {"f.json", "", "cmd"});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message,
            "the step has 16777216 rows across 2 ranks or layers and top_k 64: too many to give every row its own "
            "int32 value above the 65 expert ids (the buffer is int32)");
}

}  // namespace
}  // namespace r3
