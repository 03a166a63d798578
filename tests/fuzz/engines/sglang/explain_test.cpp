// explain --json of an SGLang case (fuzz/engines/sglang/explain.cpp, SGLang's explain part reached
// through fuzz/cli/explain.cpp): each rank's tensor at every capture call, the rows written, each
// model's window and published rows, and the verdicts.
#include <optional>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/cli/engine_explain.hpp"
#include "fuzz/cli/explain.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"
#include "tests/support/case_fixtures.hpp"
#include "tests/support/sglang_fixtures.hpp"

namespace r3 {
namespace {

using ojson = nlohmann::ordered_json;

ojson explained(const Case& c) {
  const Result<Explanation> e = explain_case(c);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return explanation_json(*e);
}

TEST(ExplainSglang, JsonHoldsTheForwardTheCallsAndEachModelsWindow) {
  const ojson j = explained(test::sglang_issue_example());
  EXPECT_EQ(j["engine"], "sglang");
  EXPECT_EQ(j["capture_layout"], "dp_graph");
  EXPECT_EQ(j["dp_padding"], "MAX_LEN");
  EXPECT_EQ(j["can_run_graph"], true);
  EXPECT_EQ(j["decode_graph"], true);
  EXPECT_EQ(j["prefill_graph"], false);
  EXPECT_EQ(j["spec_width"], 4);
  EXPECT_EQ(j["capture_rows_needed"], 16);
  EXPECT_EQ(j["dp_ranks"][1], (ojson{{"dp", 1}, {"tokens", 4}, {"padded", 8}, {"global_num_tokens_cpu", 4},
                                     {"out_cache_loc", 4}, {"runner_bs", 2}}));
  ASSERT_EQ(j["calls"].size(), 1u);
  const ojson& rank = j["calls"][0]["ranks"][2];  // (dp 1, tp 0)
  EXPECT_EQ(rank["dp"], 1);
  EXPECT_EQ(rank["tp"], 0);
  EXPECT_EQ(rank["received_rows"], 16);
  EXPECT_EQ(rank["rows_written"], 16);
  EXPECT_EQ(rank["written"], (ojson::array({{{"dp", 0}, {"first", 0}, {"rows", 8}},
                                            {{"dp", 1}, {"first", 0}, {"rows", 8}}})));
  ASSERT_EQ(j["policies"].size(), 3u);
  const ojson& up = j["policies"]["sglang"];
  EXPECT_EQ(up["verdict"], "wrong_rows");
  EXPECT_EQ(up["severity"], "failure");
  EXPECT_EQ(up["buffer_rows"], 32);
  const ojson& call = up["ranks"][2]["calls"][0];
  EXPECT_EQ(call["branch"], "window_graph");
  EXPECT_EQ(call["window"], (ojson{{"start", 2}, {"rows", 4}}));
  EXPECT_EQ(call["rejected"], false);
  EXPECT_EQ(call["published"],
            (ojson::array({{{"src_row", 2}, {"dst_row", 0}, {"rows", 4}, {"gathered", false}}})));
  EXPECT_EQ(j["policies"]["sglang-miles"]["verdict"], "pass");
  EXPECT_EQ(j["policies"]["sglang-miles"]["severity"], nullptr);
  EXPECT_EQ(j["policies"]["sglang-miles"]["ranks"][2]["calls"][0]["window"], (ojson{{"start", 8}, {"rows", 4}}));
  EXPECT_EQ(j["policies"]["sglang-fixed"]["verdict"], "pass");
}

TEST(ExplainSglang, TboShowsBothCallsAndARejectionShowsNoWindow) {
  Case tbo = test::sglang_extend(2, 1, {4, 2});
  sglang::forward_of(tbo)->tbo = true;
  const ojson j = explained(tbo);
  ASSERT_EQ(j["calls"].size(), 2u);
  EXPECT_EQ(j["calls"][1]["index"], 1);
  EXPECT_EQ(j["calls"][1]["ranks"][0]["rows_written"], 3);
  EXPECT_EQ(j["policies"]["sglang"]["ranks"][0]["calls"].size(), 2u);
  EXPECT_EQ(j["policies"]["sglang-fixed"]["ranks"][1]["calls"][1]["window"], (ojson{{"start", 2}, {"rows", 1}}));
  // A prefill graph before any decode replay: upstream raises TypeError.
  Case bcg = test::sglang_extend(2, 2, {3, 1});
  sglang::forward_of(bcg)->cuda_graph = sglang::CudaGraphs{{}, {8}};
  const ojson raised = explained(bcg)["policies"]["sglang"]["ranks"][0]["calls"][0];
  EXPECT_EQ(raised["rejected"], true);
  EXPECT_EQ(raised["published"], ojson::array());
}

// check_json_size counts, before building the document, exactly the runs and copies it lists:
// the bound on what explain --json builds holds because the count is what is built.
TEST(ExplainSglang, TheJsonSizeCountsEveryRunWrittenAndEveryCopyPublished) {
  Case tbo = test::sglang_extend(2, 2, {5, 2});
  sglang::forward_of(tbo)->tbo = true;
  Case bcg = test::sglang_extend(2, 2, {3, 1});
  sglang::forward_of(bcg)->cuda_graph = sglang::CudaGraphs{{}, {8}};
  for (const Case& c : {test::sglang_issue_example(), test::sglang_decode(4, 2, {1, 0, 3, 0}),
                        test::sglang_decode(4, 2, {1, 0, 3, 0}, sglang::A2a::deepep),
                        test::sglang_extend(3, 2, {4, 0, 7}, sglang::A2a::nixl), tbo, bcg}) {
    const Result<Explanation> e = explain_case(c);
    ASSERT_TRUE(e.ok()) << e.error().message;
    const ojson j = explanation_json(*e);
    int64_t runs = 0, copies = 0;
    for (const ojson& call : j["calls"])
      for (const ojson& rank : call["ranks"]) runs += static_cast<int64_t>(rank["written"].size());
    for (const auto& [name, model] : j["policies"].items())
      for (const ojson& rank : model["ranks"])
        for (const ojson& call : rank["calls"]) copies += static_cast<int64_t>(call["published"].size());
    const EngineExplain* part = engine_explain(sglang::engine());
    ASSERT_NE(part, nullptr);
    EXPECT_GT(runs, 0);
    EXPECT_EQ(part->written_runs(e->step), runs);
    EXPECT_EQ(part->published_copies(*e), copies);
    EXPECT_TRUE(check_json_size(*e).ok());
  }
}

// Each engine's explanation judges its released versions, then its fix, in that order (the
// columns and the "policies" of the explanation).
TEST(ExplainSglang, EachEngineJudgesItsReleasedModelsThenItsFix) {
  EXPECT_EQ(explained_policy_names(sglang::engine()),
            (std::vector<std::string_view>{"sglang", "sglang-miles", "sglang-fixed"}));
  EXPECT_EQ(explained_policy_names(vllm::engine()),
            (std::vector<std::string_view>{"vllm-50874", "vllm-pre-50874", "r3-fixed"}));
}

// vLLM's explanation is the layout report: its part lists no runs of its own.
TEST(ExplainSglang, AVllmCaseIsExplainedByTheLayoutReport) {
  const EngineExplain* part = engine_explain(vllm::engine());
  ASSERT_NE(part, nullptr);
  const Result<Explanation> e = explain_case(test::smallest_sp_gathered_case());
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(part->written_runs(e->step), std::nullopt);
  EXPECT_EQ(explanation_json(*e), layout_explanation_json(*e));
  EXPECT_EQ(explanation_text(*e), layout_explanation_text(*e));
}

}  // namespace
}  // namespace r3
