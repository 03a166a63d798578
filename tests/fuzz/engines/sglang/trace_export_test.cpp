// SGLang's trace export part (fuzz/engines/sglang/trace_export.cpp): each DP rank's rows with
// whether their KV may be reused, the copies record as done_before_step, the sizes of the caches;
// and the traces whose finding is not the capturer's, refused saying why.
#include <gtest/gtest.h>

#include "fuzz/codec/trace_json.hpp"
#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/export/trace_target.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3::sglang {
namespace {

const std::string kTraces = std::string(R3FUZZ_SOURCE_DIR) + "/corpus/traces/";

Result<std::string> data_of(const std::string& name) {
  auto t = read_trace_file(kTraces + name);
  EXPECT_TRUE(t.ok()) << t.error().message;
  if (!t.ok()) return t.error();
  auto timeline = validate_trace(*t);
  EXPECT_TRUE(timeline.ok());
  return trace_export_part().engine_data(*t, *timeline);
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(SglangTraceExport, CopyLateSteps) {
  auto data = data_of("regression/sglang-copy-late-wrong_route.json");
  ASSERT_TRUE(data.ok()) << data.error().message;
  for (const char* line : {
           "DP, TP, OVERLAP = 1, 1, True",
           "DEVICE_ROWS = 3  # the device cache's rows: the most a forward captures",
           "HOST_SLOTS = 7  # KV slots: 0 is the dummy slot, then one per row a rank forwards",
           "RANK_OF = [0, 0]  # the DP rank that serves each request",
           "FINAL_LEN = [5, 3]  # the seqlen get_topk is given: prompt and kept outputs",
           "     \"ranks\": [{\"rows\": [(1, 0, True), (1, 1, True)], \"padding\": 0}],",
           "     \"collect\": [1]},",
           "COPY_DONE = [2, 2, 3]",
       }) {
    EXPECT_TRUE(has_line(*data, line)) << "missing line: " << line << "\n" << *data;
  }
}

// The knob of the traces before the copies record reads as every copy late (D = S + 2).
TEST(SglangTraceExport, TheOverlapCopyRaceKnobIsEveryCopyLate) {
  auto data = data_of("regression/sglang-overlap-copy-race-wrong_route.json");
  ASSERT_TRUE(data.ok()) << data.error().message;
  EXPECT_TRUE(has_line(*data, "COPY_DONE = [2, 2]")) << *data;
}

TEST(SglangTraceExport, WhatTheCapturerCannotShowIsRefused) {
  for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
           {"regression/sglang-tree-accept-rows-wrong_route.json",
            "config.spec: speculative decoding moves KV in the worker, not in the capturer"},
           {"regression/sglang-pd-prompt-rows-wrong_route.json",
            "steps[0].events[0]: pd_handoff: the SGLang trace harness drives the capturer only, and this KV move is "
            "the memory pool's or the scheduler's"},
           {"regression/sglang-offload-rows-wrong_route.json",
            "config.pd_router: the P/D hand-off is the scheduler's, not the capturer's"},
           {"production/mooncake-excerpt-sglang-1.json",
            "topology.dp_attention: the SGLang trace harness drives ranks without DP attention (the per-step window "
            "under DP attention is what r3fuzz export CASE.json tests)"},
       }) {
    SCOPED_TRACE(name);
    auto data = data_of(name);
    ASSERT_FALSE(data.ok());
    EXPECT_EQ(data.error().message, why);
  }
}

}  // namespace
}  // namespace r3::sglang
