// SGLang's layout derivation (reference/engines/sglang/layout.cpp; docs/layout-contract.md
// sections 11.3 and 11.4): for each rule, the exact rows every rank's capture sees, the counts
// of the forward batch and the rows the buffer must hold.
#include "reference/engines/sglang/layout.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/sglang_fixtures.hpp"

namespace r3::sglang {
namespace {

using test::TokenRun;
using test::token_runs;
using test::views_of;
using V = std::vector<int64_t>;
using Views = std::vector<std::pair<int, int>>;
using Runs = std::vector<TokenRun>;

Step step_of(const Case& c) {
  Result<Step> s = sglang::derive_step(c);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : Step{};
}

TEST(SglangLayout, CountsAndBuckets) {
  EXPECT_EQ(forward_tokens(test::sglang_verify(2, 1, {2, 1}, 3)), (V{6, 3}));
  EXPECT_EQ(forward_tokens(test::sglang_extend(2, 1, {5, 0})), (V{5, 0}));
  EXPECT_EQ(ceil_align(0, 4), 0);
  EXPECT_EQ(ceil_align(5, 4), 8);
  EXPECT_EQ(ceil_align(8, 4), 8);
  EXPECT_EQ(decode_bucket({1, 2, 4}, 3), 4);
  EXPECT_EQ(decode_bucket({1, 2, 4}, 2), 2);
  EXPECT_EQ(decode_bucket({1, 2, 4}, 5), -1);
}

TEST(SglangLayout, LocalBatchWithoutDpAttentionIsTheUnalignedBatch) {
  // No DP attention, a2a none: prepare_mlp_sync_batch does not run, so 3 tokens stay 3 rows on attn_tp 2.
  const Step s = step_of(test::sglang_extend(1, 2, {3}));
  EXPECT_EQ(s.engine, sglang::engine());
  EXPECT_EQ(sglang::forward_of(s)->capture, CaptureLayout::local_batch);
  EXPECT_EQ(sglang::forward_of(s)->padding, DpPadding::none);
  EXPECT_EQ(sglang::forward_of(s)->global_num_tokens_cpu, (V{3}));
  EXPECT_EQ(sglang::forward_of(s)->out_cache_loc, (V{3}));
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(views_of(s.calls[0]), (Views{{0, -1}, {0, -1}}));
  EXPECT_EQ(token_runs(s.calls[0].tensors[0]), (Runs{{3, 0, 0}}));
  EXPECT_TRUE(s.calls[0].segments.empty());
  EXPECT_EQ(s.capture_rows_needed, 3);
}

TEST(SglangLayout, MaxLenGathersEqualSegmentsOfTheLargestAlignedCount) {
  // Decode [3, 1] on attn_tp 2: a = [4, 2]; 2 * 6 >= 2 * 4 gives MAX_LEN, segments of 4.
  const Step s = step_of(test::sglang_decode(2, 2, {3, 1}));
  const ForwardLayout& f = *sglang::forward_of(s);
  EXPECT_EQ(f.capture, CaptureLayout::dp_max_len);
  EXPECT_EQ(f.padding, DpPadding::max_len);
  EXPECT_FALSE(f.can_run_graph());
  EXPECT_EQ(f.tokens, (V{3, 1}));
  EXPECT_EQ(f.padded, (V{4, 4}));
  EXPECT_EQ(f.global_num_tokens_cpu, (V{4, 4}));
  EXPECT_EQ(f.out_cache_loc, (V{4, 4}));
  EXPECT_EQ(f.segment_start, (std::vector<V>{{0, 4}}));
  EXPECT_EQ(f.runner_bs, (V{-1, -1}));
  ASSERT_EQ(s.calls.size(), 1u);
  const Call& call = s.calls[0];
  // Rank 1's batch is its token and three padding tokens (1, 1..3), at row 4.
  EXPECT_EQ(token_runs(call.tensors[0]), (Runs{{4, 0, 0}, {4, 1, 0}}));
  EXPECT_EQ(views_of(call), (Views{{0, -1}, {0, -1}, {0, -1}, {0, -1}}));
  ASSERT_EQ(call.segments.size(), 2u);
  EXPECT_EQ(call.segments[1].offset, 4);
  EXPECT_EQ(call.segments[1].rows, 4);
  EXPECT_EQ(call.segments[1].token_rows, 1);
  EXPECT_EQ(call.gathered_rows, 8);
  EXPECT_EQ(s.num_tokens_across_dp, (V{3, 1}));  // the oracle expects the real tokens
  EXPECT_EQ(s.max_num_tokens, 4);
  EXPECT_EQ(s.capture_rows_needed, 8);
}

TEST(SglangLayout, PplxAlwaysPadsToMaxLen) {
  // An extend batch with dp > 1 is SUM_LEN, except under pplx.
  const Step s = step_of(test::sglang_extend(2, 1, {3, 1}, A2a::pplx));
  EXPECT_EQ(sglang::forward_of(s)->padding, DpPadding::max_len);
  EXPECT_EQ(sglang::forward_of(s)->capture, CaptureLayout::attn_tp_slice);
  EXPECT_EQ(sglang::forward_of(s)->global_num_tokens_cpu, (V{3, 3}));
  EXPECT_EQ(sglang::forward_of(s)->padded, (V{3, 3}));
  EXPECT_EQ(token_runs(s.calls[0].tensors[1]), (Runs{{3, 1, 0}}));
}

TEST(SglangLayout, SumLenConcatenatesTheAlignedCountsOfAnExtend) {
  // Extend [3, 1] on attn_tp 2, dp 2: a = [4, 2], SUM_LEN, rank 1 at 4.
  const Step s = step_of(test::sglang_extend(2, 2, {3, 1}));
  const ForwardLayout& f = *sglang::forward_of(s);
  EXPECT_EQ(f.capture, CaptureLayout::dp_sum_len);
  EXPECT_EQ(f.padding, DpPadding::sum_len);
  EXPECT_EQ(f.global_num_tokens_cpu, (V{4, 2}));
  EXPECT_EQ(f.padded, (V{4, 2}));
  EXPECT_EQ(f.out_cache_loc, (V{4, 2}));
  EXPECT_EQ(f.segment_start, (std::vector<V>{{0, 4}}));
  EXPECT_EQ(token_runs(s.calls[0].tensors[0]), (Runs{{4, 0, 0}, {2, 1, 0}}));
  EXPECT_EQ(s.calls[0].gathered_rows, 6);
  EXPECT_EQ(s.capture_rows_needed, 6);
}

TEST(SglangLayout, AnUnbalancedDecodeIsSumLen) {
  // Decode [4, 1, 0] on dp 3: 2 * 5 < 3 * 4, SUM_LEN.
  const Step s = step_of(test::sglang_decode(3, 1, {4, 1, 0}));
  EXPECT_EQ(sglang::forward_of(s)->padding, DpPadding::sum_len);
  EXPECT_EQ(sglang::forward_of(s)->global_num_tokens_cpu, (V{4, 1, 0}));
  EXPECT_EQ(sglang::forward_of(s)->segment_start, (std::vector<V>{{0, 4, 5}}));
  EXPECT_EQ(s.capture_rows_needed, 5);
}

TEST(SglangLayout, DecodeGraphPadsEveryRankToTheLargestBatchsBucket) {
  // DP attention, a2a none: every rank replays bucket(max(3, 1)) = 4; global_num_tokens_cpu keeps the raw counts.
  Case c = test::sglang_decode(2, 2, {3, 1});
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{2, 4}, {}};
  const Step s = step_of(c);
  const ForwardLayout& f = *sglang::forward_of(s);
  EXPECT_EQ(f.capture, CaptureLayout::dp_graph);
  EXPECT_TRUE(f.decode_graph);
  EXPECT_FALSE(f.prefill_graph);
  EXPECT_TRUE(f.can_run_graph());
  EXPECT_EQ(f.runner_bs, (V{4, 4}));
  EXPECT_EQ(f.padded, (V{4, 4}));
  EXPECT_EQ(f.global_num_tokens_cpu, (V{3, 1}));
  EXPECT_EQ(f.out_cache_loc, (V{3, 1}));
  EXPECT_EQ(token_runs(s.calls[0].tensors[0]), (Runs{{4, 0, 0}, {4, 1, 0}}));
  EXPECT_EQ(s.capture_rows_needed, 8);
}

TEST(SglangLayout, VerifyGraphPadsToBucketTimesWidth) {
  // The issue's example: verify [2, 1], w 4, bucket 2: every batch padded to bs * w = 8 rows.
  const Step s = step_of(test::sglang_issue_example());
  const ForwardLayout& f = *sglang::forward_of(s);
  EXPECT_EQ(f.capture, CaptureLayout::dp_graph);
  EXPECT_EQ(f.spec_width, 4);
  EXPECT_EQ(f.tokens, (V{8, 4}));
  EXPECT_EQ(f.runner_bs, (V{2, 2}));
  EXPECT_EQ(f.padded, (V{8, 8}));
  EXPECT_EQ(f.global_num_tokens_cpu, (V{8, 4}));
  EXPECT_EQ(f.out_cache_loc, (V{8, 4}));
  EXPECT_EQ(f.segment_start, (std::vector<V>{{0, 8}}));
  EXPECT_EQ(token_runs(s.calls[0].tensors[0]), (Runs{{8, 0, 0}, {8, 1, 0}}));
  EXPECT_EQ(s.capture_rows_needed, 16);
}

TEST(SglangLayout, WithoutTheMlpGatherEachRankReplaysItsOwnBucket) {
  // DeepEP under DP attention: no require_mlp_tp_gather, so ranks replay bucket(3) = 4 and bucket(1) = 1.
  Case c = test::sglang_decode(2, 1, {3, 1}, A2a::deepep);
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{1, 2, 4}, {}};
  const Step s = step_of(c);
  EXPECT_EQ(sglang::forward_of(s)->capture, CaptureLayout::deepep_gather);
  EXPECT_EQ(sglang::forward_of(s)->runner_bs, (V{4, 1}));
  EXPECT_EQ(sglang::forward_of(s)->padded, (V{4, 1}));
  EXPECT_EQ(sglang::forward_of(s)->global_num_tokens_cpu, (V{3, 1}));
}

TEST(SglangLayout, NoGraphRunsWhenTheLargestBatchOutgrowsTheBuckets) {
  // Requests [3, 1] with buckets [2]: the DP ranks agree to run eager, the runner keeps its last bs.
  Case c = test::sglang_decode(2, 2, {3, 1});
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{2}, {}};
  sglang::forward_of(c)->last_decode_bucket = 2;
  const Step s = step_of(c);
  EXPECT_FALSE(sglang::forward_of(s)->decode_graph);
  EXPECT_EQ(sglang::forward_of(s)->capture, CaptureLayout::dp_max_len);
  EXPECT_EQ(sglang::forward_of(s)->runner_bs, (V{2, 2}));
  EXPECT_EQ(sglang::forward_of(s)->global_num_tokens_cpu, (V{4, 4}));
}

TEST(SglangLayout, PrefillGraphForcesMaxLen) {
  // Extend [3, 1] on attn_tp 2 with prefill bucket 8: max(a) = 4 fits, BCG runs and forces MAX_LEN.
  Case c = test::sglang_extend(2, 2, {3, 1});
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{}, {8}};
  const Step s = step_of(c);
  const ForwardLayout& f = *sglang::forward_of(s);
  EXPECT_TRUE(f.prefill_graph);
  EXPECT_FALSE(f.decode_graph);
  EXPECT_TRUE(f.can_run_graph());
  EXPECT_EQ(f.padding, DpPadding::max_len);
  EXPECT_EQ(f.capture, CaptureLayout::dp_max_len);
  EXPECT_EQ(f.global_num_tokens_cpu, (V{4, 4}));
  EXPECT_EQ(f.padded, (V{4, 4}));
  EXPECT_EQ(token_runs(s.calls[0].tensors[0]), (Runs{{4, 0, 0}, {4, 1, 0}}));
  // Past the largest bucket the extend runs eager, SUM_LEN.
  c.tokens = {9, 1};
  const Step eager = step_of(c);
  EXPECT_FALSE(sglang::forward_of(eager)->prefill_graph);
  EXPECT_EQ(sglang::forward_of(eager)->padding, DpPadding::sum_len);
  EXPECT_EQ(sglang::forward_of(eager)->global_num_tokens_cpu, (V{10, 2}));
}

TEST(SglangLayout, DeepepScattersTheBatchAndTheCapturerGathersIt) {
  // DeepEP, dp 1, attn_tp 2, extend [3]: a = [4]; TP rank t holds rows [2t, 2t + 2) of tensor 0,
  // which is also the gather.
  const Step s = step_of(test::sglang_extend(1, 2, {3}, A2a::deepep));
  EXPECT_EQ(sglang::forward_of(s)->capture, CaptureLayout::deepep_gather);
  EXPECT_EQ(sglang::forward_of(s)->padding, DpPadding::none);
  EXPECT_EQ(sglang::forward_of(s)->global_num_tokens_cpu, (V{4}));
  const Call& call = s.calls[0];
  ASSERT_EQ(call.tensors.size(), 1u);
  EXPECT_EQ(token_runs(call.input_of(call.view(0, 0))), (Runs{{2, 0, 0}}));
  EXPECT_EQ(token_runs(call.input_of(call.view(0, 1))), (Runs{{2, 0, 2}}));
  EXPECT_EQ(token_runs(call.tensors[0]), (Runs{{4, 0, 0}}));
  EXPECT_EQ(views_of(call), (Views{{0, 0}, {0, 0}}));
  EXPECT_EQ(s.capture_rows_needed, 4);  // the gather is what lands in the buffer
}

TEST(SglangLayout, DeepepUnderDpAttentionGathersEachRankOnItsOwn) {
  // dp 2, attn_tp 2, extend [3, 1]: a = [4, 2] (SUM_LEN); slices of 2 and 1 rows, one gather per DP rank.
  const Step s = step_of(test::sglang_extend(2, 2, {3, 1}, A2a::deepep));
  EXPECT_EQ(sglang::forward_of(s)->global_num_tokens_cpu, (V{4, 2}));
  const Call& call = s.calls[0];
  ASSERT_EQ(call.tensors.size(), 2u);
  EXPECT_EQ(token_runs(call.input_of(call.view(1, 0))), (Runs{{1, 1, 0}}));
  EXPECT_EQ(token_runs(call.input_of(call.view(1, 1))), (Runs{{1, 1, 1}}));
  EXPECT_EQ(token_runs(call.tensors[0]), (Runs{{4, 0, 0}}));
  EXPECT_EQ(token_runs(call.tensors[1]), (Runs{{2, 1, 0}}));
  EXPECT_EQ(views_of(call), (Views{{0, 0}, {0, 0}, {1, 1}, {1, 1}}));
  EXPECT_TRUE(call.segments.empty());
  EXPECT_EQ(s.capture_rows_needed, 4);
}

TEST(SglangLayout, AnotherA2aBackendLeavesTheAttnTpSliceUngathered) {
  // mooncake, attn_tp 2, extend [3]: counts aligned (a scattered backend), each TP rank writes its 2 rows.
  const Step s = step_of(test::sglang_extend(1, 2, {3}, A2a::mooncake));
  EXPECT_EQ(sglang::forward_of(s)->capture, CaptureLayout::attn_tp_slice);
  EXPECT_EQ(sglang::forward_of(s)->padded, (V{4}));
  const Call& call = s.calls[0];
  ASSERT_EQ(call.tensors.size(), 1u);
  EXPECT_EQ(token_runs(call.input_of(call.view(0, 0))), (Runs{{2, 0, 0}}));
  EXPECT_EQ(token_runs(call.input_of(call.view(0, 1))), (Runs{{2, 0, 2}}));
  EXPECT_EQ(views_of(call), (Views{{0, -1}, {0, -1}}));
  EXPECT_EQ(s.capture_rows_needed, 2);
  // With attn_tp 1 the slice is the whole, unaligned batch.
  const Step whole = step_of(test::sglang_extend(1, 1, {3}, A2a::nixl));
  EXPECT_EQ(sglang::forward_of(whole)->padded, (V{3}));
  EXPECT_EQ(token_runs(whole.calls[0].tensors[0]), (Runs{{3, 0, 0}}));
}

TEST(SglangLayout, TboExtendSplitsEachBatchInTwoCalls) {
  // TBO, dp 2, extend [4, 2]: children [0, 2) + [0, 1), then [2, 4) + [1, 2); each call gathered anew.
  Case c = test::sglang_extend(2, 1, {4, 2});
  sglang::forward_of(c)->tbo = true;
  const Step s = step_of(c);
  ASSERT_EQ(s.calls.size(), 2u);
  const ForwardLayout& f = *sglang::forward_of(s);
  EXPECT_EQ(f.call_rows, (std::vector<std::vector<RowRange>>{{{0, 2}, {0, 1}}, {{2, 4}, {1, 2}}}));
  EXPECT_EQ(f.segment_start, (std::vector<V>{{0, 2}, {0, 2}}));
  EXPECT_EQ(token_runs(s.calls[0].tensors[0]), (Runs{{2, 0, 0}, {1, 1, 0}}));
  EXPECT_EQ(token_runs(s.calls[1].tensors[0]), (Runs{{2, 0, 2}, {1, 1, 1}}));
  EXPECT_EQ(s.calls[1].index, 1);
  EXPECT_EQ(s.capture_rows_needed, 3);
}

TEST(SglangLayout, TboDecodeSplitsAfterHalfTheRequestsKeepingAttnTpSlicesWhole) {
  // Decode graph [3, 2], attn_tp 2, bucket 4: 4 padded rows split after 2 (a multiple of attn_tp).
  Case c = test::sglang_decode(2, 2, {3, 2});
  sglang::forward_of(c)->tbo = true;
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{4}, {}};
  const Step s = step_of(c);
  EXPECT_EQ(sglang::forward_of(s)->call_rows, (std::vector<std::vector<RowRange>>{{{0, 2}, {0, 2}}, {{2, 4}, {2, 4}}}));
  EXPECT_EQ(token_runs(s.calls[1].tensors[0]), (Runs{{2, 0, 2}, {2, 1, 2}}));
  // A verify splits on whole requests: bs 4, w 3: 12 rows split after 2 requests, row 6.
  Case v = test::sglang_verify(2, 1, {3, 1}, 3);
  sglang::forward_of(v)->tbo = true;
  sglang::forward_of(v)->cuda_graph = CudaGraphs{{4}, {}};
  const Step sv = step_of(v);
  EXPECT_EQ(sglang::forward_of(sv)->call_rows, (std::vector<std::vector<RowRange>>{{{0, 6}, {0, 6}}, {{6, 12}, {6, 12}}}));
  // Extend [3] on attn_tp 2 under DeepEP: a = [4], split at 2.
  Case e = test::sglang_extend(1, 2, {3}, A2a::deepep);
  sglang::forward_of(e)->tbo = true;
  EXPECT_EQ(sglang::forward_of(step_of(e))->call_rows, (std::vector<std::vector<RowRange>>{{{0, 2}}, {{2, 4}}}));
}

TEST(SglangLayout, IdleRanksJoinTheGather) {
  // SUM_LEN: an idle rank adds no rows (a = 0), so rank 2 starts where rank 1 would.
  const Step sum = step_of(test::sglang_extend(3, 2, {3, 0, 1}));
  EXPECT_EQ(sglang::forward_of(sum)->global_num_tokens_cpu, (V{4, 0, 2}));
  EXPECT_EQ(sglang::forward_of(sum)->segment_start, (std::vector<V>{{0, 4, 4}}));
  EXPECT_EQ(token_runs(sum.calls[0].tensors[0]), (Runs{{4, 0, 0}, {2, 2, 0}}));
  EXPECT_EQ(sum.real_tokens, (V{3, 0, 1}));
  // MAX_LEN: the idle rank runs max(a) padding tokens.
  const Step max = step_of(test::sglang_decode(2, 1, {2, 0}));
  EXPECT_EQ(sglang::forward_of(max)->padding, DpPadding::max_len);
  EXPECT_EQ(sglang::forward_of(max)->global_num_tokens_cpu, (V{2, 2}));
  EXPECT_EQ(token_runs(max.calls[0].tensors[0]), (Runs{{2, 0, 0}, {2, 1, 0}}));
  EXPECT_EQ(max.calls[0].segments[1].token_rows, 0);
  EXPECT_EQ(max.num_tokens_across_dp, (V{2, 0}));
}

TEST(SglangLayout, CaptureLayoutOfAgreesWithTheStep) {
  EXPECT_EQ(capture_layout_of(test::sglang_issue_example()), CaptureLayout::dp_graph);
  EXPECT_EQ(capture_layout_of(test::sglang_extend(2, 2, {3, 1})), CaptureLayout::dp_sum_len);
  EXPECT_EQ(capture_layout_of(test::sglang_extend(1, 2, {3}, A2a::mori)), CaptureLayout::attn_tp_slice);
  EXPECT_EQ(to_string(CaptureLayout::deepep_gather), "deepep_gather");
  EXPECT_EQ(to_string(DpPadding::sum_len), "SUM_LEN");
}

TEST(SglangLayout, DeriveStepRefusesAnInvalidCase) {
  Case c = test::sglang_extend(2, 2, {3, 1});
  sglang::forward_of(c)->dp_attention = false;
  const Result<Step> s = sglang::derive_step(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "topology.dp: 2 attention-DP ranks need dp_attention true (without DP attention dp is 1)");
}

}  // namespace
}  // namespace r3::sglang
