// TensorRT-LLM's trace export part (fuzz/engines/trtllm/trace_export.cpp): each step as RouteCapture
// sees it (events, context and generation requests, dummies, weight version, attach lists) and when
// each copy is first seen landed, for the ring reproducer (T7) and the reset (T5).
#include <gtest/gtest.h>

#include "fuzz/engines/trtllm/parts.hpp"
#include "tests/support/trace_export_data.hpp"

namespace r3::trtllm {
namespace {

Result<std::string> data_of(const std::string& name) { return test::trace_export_data(trace_export_part(), name); }

using test::has_line;

TEST(TrtllmTraceExport, RingReuseSteps) {
  auto data = data_of("regression/trtllm-06a976ce-commit-before-reuse-wrong_route.json");
  ASSERT_TRUE(data.ok()) << data.error().message;
  for (const char* line : {
           "MAX_NUM_TOKENS = 8  # model_engine.max_num_tokens: rows a forward holds at most",
           "TOKENS_PER_BLOCK = 1",
           "FINAL_LEN = [7]  # S: the tokens a request holds when it finishes (prompt and kept outputs)",
           "    {\"events\": [], \"attach_before\": [],",
           "     \"context\": [(0, 0, 1)], \"generation\": [], \"dummies\": 0, \"version\": 0, \"attach\": []},",
           "     \"context\": [], \"generation\": [(0, 5)], \"dummies\": 0, \"version\": 0, \"attach\": [0]},",
           "# in order: its own step). A forced drain or a synchronize lands it at once.",
           "COPY_SEEN = [0, 1, 5, 5, 5, 5]",
       }) {
    EXPECT_TRUE(has_line(*data, line)) << "missing line: " << line << "\n" << *data;
  }
}

// A flushing weight update is reset_prefix_cache; the hit sets prepopulated_prompt_len; the
// second forward runs at version 1; request 0 finishes in it, request 2 in the third.
TEST(TrtllmTraceExport, ResetAndHitSteps) {
  auto data = data_of("regression/trtllm-shared-cache-epoch-wrong_route.json");
  ASSERT_TRUE(data.ok()) << data.error().message;
  for (const char* line : {
           "    {\"events\": [(\"reset_prefix_cache\",)], \"attach_before\": [],",
           "     \"context\": [(1, 0, 3)], \"generation\": [(0, 3)], \"dummies\": 0, \"version\": 1, \"attach\": [1, 0]},",
           "    {\"events\": [(\"hit\", 2, 2)], \"attach_before\": [],",
           "     \"context\": [(2, 2, 3)], \"generation\": [], \"dummies\": 0, \"version\": 1, \"attach\": [2]},",
           "COPY_SEEN = [0, 1, 2]",
       }) {
    EXPECT_TRUE(has_line(*data, line)) << "missing line: " << line << "\n" << *data;
  }
}

// Under the overlap scheduler, an eos request's attach waits for its extra step.
TEST(TrtllmTraceExport, AnExtraOverlapStepDefersTheAttach) {
  auto data = data_of("regression/trtllm-range-to-finish-long_output.json");
  ASSERT_TRUE(data.ok()) << data.error().message;
  EXPECT_TRUE(has_line(*data, "     \"context\": [], \"generation\": [(0, 2)], \"dummies\": 0, \"version\": 0, \"attach\": []},"))
      << *data;
  EXPECT_TRUE(has_line(*data, "     \"context\": [], \"generation\": [(0, 3)], \"dummies\": 0, \"version\": 0, \"attach\": [0]},"))
      << *data;
}

}  // namespace
}  // namespace r3::trtllm
