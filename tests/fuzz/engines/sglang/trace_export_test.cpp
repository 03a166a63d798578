// SGLang's trace export part (fuzz/engines/sglang/trace_export.cpp): each DP rank's rows with
// whether their KV may be reused, the copies record as done_before_step, the sizes of the caches
// each model allocates, each forward under DP attention as the per-step model lays it out; and the
// traces whose finding is not the capturer's, refused saying why.
#include <gtest/gtest.h>

#include "fuzz/engines/sglang/parts.hpp"
#include "tests/support/trace_export_data.hpp"

namespace r3::sglang {
namespace {

Result<std::string> data_of(const std::string& name) { return test::trace_export_data(trace_export_part(), name); }

using test::has_line;

TEST(SglangTraceExport, CopyLateSteps) {
  auto data = data_of("regression/sglang-copy-late-wrong_route.json");
  ASSERT_TRUE(data.ok()) << data.error().message;
  for (const char* line : {
           "DP, TP, OVERLAP, DP_ATTENTION = 1, 1, True, False",
           "CHUNKED_PREFILL_SIZE, MAX_RUNNING_REQUESTS = -1, 16  # --chunked-prefill-size; --max-running-requests, the "
           "trace's token budget",
           "SIZINGS = {\"sglang\": 16, \"sglang-miles\": 16, \"sglang-fixed\": 16}",
           "HOST_SLOTS = 7  # KV slots: 0 is the dummy slot, then one per row a rank forwards",
           "RANK_OF = [0, 0]  # the DP rank that serves each request",
           "FINAL_LEN = [5, 3]  # the seqlen get_topk is given: prompt and kept outputs",
           "     \"ranks\": [{\"rows\": [(1, 0, True, False), (1, 1, True, False)], \"padding\": 0}],",
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

// Under DP attention (dp 2, tp 1) a chain verify of width 3 replays the decode graph of bucket 1:
// rank 1's 4 rows follow rank 0's 4 padding rows in the DP-gathered tensor (bs * w each), and the
// window is told bs = 1 request. Its rows at positions 3 and 4 lie past the request's last output
// (the length limit cut them), so the trace names no route for them.
TEST(SglangTraceExport, DpAttentionStepsAreTheForwardThePerStepModelLaysOut) {
  auto data = data_of("regression/sglang-step-capture-wrong_route.json");
  ASSERT_TRUE(data.ok()) << data.error().message;
  for (const char* line : {
           "DP, TP, OVERLAP, DP_ATTENTION = 2, 1, False, True",
           "SIZINGS = {\"sglang\": 8, \"sglang-miles\": 8, \"sglang-fixed\": 32}",
           "     \"ranks\": [{\"rows\": [], \"padding\": 4}, {\"rows\": [(0, 1, True, False), (0, 2, True, False), "
           "(0, 3, False, True), (0, 4, False, True)], \"padding\": 0}],",
           "     \"dp_attention\": {\"tensors\": [[None, None, None, None, (1, 0), (1, 1), (1, 2), (1, 3)]],",
           "            \"calls\": [{\"received\": [0, 0], \"dp_local_start\": [0, 4], \"dp_local_num_tokens\": [4, 4], "
           "\"batch_offset\": [0, 0]}],",
           "            \"forward_mode\": \"verify\", \"global_num_tokens_cpu\": [0, 4], \"out_cache_loc\": [0, 4], "
           "\"can_run_graph\": True, \"runner_bs\": [1, 1], \"captured_req_width\": 4},",
       }) {
    EXPECT_TRUE(has_line(*data, line)) << "missing line: " << line << "\n" << *data;
  }
}

TEST(SglangTraceExport, WhatTheCapturerCannotShowIsRefused) {
  for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
           {"regression/sglang-tree-accept-rows-wrong_route.json",
            "steps[2].run[0]: a tree verify that accepts 1 of 3 drafts: the worker moves the accepted path's KV "
            "(eagle_worker_common.py, _finalize_accept_tree_path; spec_utils.py, move_accept_tokens_to_target_kvcache), "
            "not the capturer"},
           {"regression/sglang-ngram-overlap-capture-wrong_route.json",
            "config.spec_algorithm: ngram under the overlap scheduler: whether NGRAM's forwards hand their capture on "
            "is the worker's (speculative/ngram_worker.py, NGRAMWorker.forward_batch_generation), not the capturer's"},
           {"regression/sglang-pd-prompt-rows-wrong_route.json",
            "steps[0].events[0]: pd_handoff: the SGLang trace harness drives the capturer only, and this KV move is "
            "the memory pool's or the scheduler's"},
           {"regression/sglang-offload-rows-wrong_route.json",
            "config.pd_router: the P/D hand-off is the scheduler's, not the capturer's"},
       }) {
    SCOPED_TRACE(name);
    auto data = data_of(name);
    ASSERT_FALSE(data.ok());
    EXPECT_EQ(data.error().message, why);
  }
}

}  // namespace
}  // namespace r3::sglang
