#include "reference/layout.hpp"

#include <numeric>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "tests/support/case_fixtures.hpp"
#include "tests/support/case_gen.hpp"

namespace r3 {
namespace {

using test::make_case;
using V = std::vector<int64_t>;

Case with_padding(Case c, Padding p) {
  c.padding = std::move(p);
  return c;
}

Step step_of(const Case& c) {
  auto s = derive_step(c);
  R3_CHECK(s.ok(), "test case is valid");
  return std::move(s).value();
}

std::vector<RowRun> runs(const RowTensor& t) { return {t.runs().begin(), t.runs().end()}; }

RowRun tokens(int dp, int64_t first, int64_t length) { return {length, RowKind::token, dp, first}; }
RowRun padding(int dp, int64_t first, int64_t length) { return {length, RowKind::sp_padding, dp, first}; }

TEST(NumTokensAcrossDp, NoneKeepsRealCounts) {
  const Case c = make_case({3, 1, false, false}, 8, {3, 0, 5}, Path::gathered);
  EXPECT_EQ(derive_num_tokens_across_dp(c), (V{3, 0, 5}));
}

TEST(NumTokensAcrossDp, DpMaxPadsEveryRankToTheMax) {
  const Case c = with_padding(make_case({3, 1, false, false}, 8, {3, 0, 5}, Path::gathered), {PaddingMode::dp_max, {}});
  EXPECT_EQ(derive_num_tokens_across_dp(c), (V{5, 5, 5}));
}

TEST(NumTokensAcrossDp, CudagraphPadsToTheSmallestBucketAtLeastTheMax) {
  const Case base = make_case({3, 1, false, false}, 8, {3, 0, 5}, Path::gathered);
  EXPECT_EQ(derive_num_tokens_across_dp(with_padding(base, {PaddingMode::cudagraph, {1, 4, 8}})), (V{8, 8, 8}));
  EXPECT_EQ(derive_num_tokens_across_dp(with_padding(base, {PaddingMode::cudagraph, {1, 5, 8}})), (V{5, 5, 5}));
}

TEST(NumTokensAcrossDp, CudagraphRunsEagerAboveEveryBucket) {
  const Case base = make_case({3, 1, false, false}, 8, {3, 0, 5}, Path::gathered);
  EXPECT_EQ(derive_num_tokens_across_dp(with_padding(base, {PaddingMode::cudagraph, {1, 2, 4}})), (V{3, 0, 5}));
}

TEST(NumTokensAcrossDp, CudagraphBucketAboveMaxNumTokens) {
  const Case c = with_padding(make_case(test::kDp2, 8, {3, 2}, Path::gathered), {PaddingMode::cudagraph, {16}});
  EXPECT_EQ(derive_num_tokens_across_dp(c), (V{16, 16}));
  EXPECT_EQ(step_of(c).capture_rows_needed, 16);
}

TEST(LocalSizes, SpRepeatsTheShardSizeTpTimes) {
  EXPECT_EQ(derive_local_sizes({5, 3}, 2, true), (V{3, 3, 2, 2}));
  EXPECT_EQ(derive_local_sizes({1, 0}, 4, true), (V{1, 1, 1, 1, 0, 0, 0, 0}));
}

TEST(LocalSizes, NoSpIsTheCounts) { EXPECT_EQ(derive_local_sizes({5, 3}, 2, false), (V{5, 3})); }

TEST(Segments, SpOnIsDpMajorWithTailPadding) {
  const auto segs = derive_segments({3, 2}, 2, true);
  ASSERT_EQ(segs.size(), 4u);
  auto as_tuple = [](const Segment& s) {
    return std::vector<int64_t>{s.dp, s.tp, s.group_rank, s.offset, s.rows, s.token_rows, s.padding_rows};
  };
  EXPECT_EQ(as_tuple(segs[0]), (V{0, 0, 0, 0, 2, 2, 0}));
  EXPECT_EQ(as_tuple(segs[1]), (V{0, 1, 1, 2, 2, 1, 1}));
  EXPECT_EQ(as_tuple(segs[2]), (V{1, 0, 2, 4, 1, 1, 0}));
  EXPECT_EQ(as_tuple(segs[3]), (V{1, 1, 3, 5, 1, 1, 0}));
}

TEST(Segments, PaddingCanFillMoreThanTheLastShard) {  // section 3: n_d = 1, T = 4
  const auto segs = derive_segments({1, 4}, 4, true);
  ASSERT_EQ(segs.size(), 8u);
  EXPECT_EQ(segs[0].token_rows, 1);
  for (int t = 1; t < 4; ++t) {
    EXPECT_EQ(segs[t].token_rows, 0) << t;
    EXPECT_EQ(segs[t].padding_rows, 1) << t;
  }
  EXPECT_EQ(segs[4].offset, 4);
}

TEST(Segments, SpOffIsPrefixSums) {
  const auto segs = derive_segments({3, 0, 2}, 2, false);
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(segs[1].offset, 3);
  EXPECT_EQ(segs[1].rows, 0);
  EXPECT_EQ(segs[2].offset, 3);
  EXPECT_EQ(segs[2].rows, 2);
  EXPECT_EQ(segs[2].tp, 0);
}

TEST(DeriveStep, RejectsAnInvalidCase) {
  auto s = derive_step(make_case(test::kDp2, 8, {3}, Path::gathered));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "tokens: has 1 entries, topology.dp is 2 (one count per DP rank)");
}

TEST(DeriveStep, SinglePath) {
  const Step s = step_of(make_case(test::kSingle, 8, {5}, Path::single, true));
  ASSERT_EQ(s.calls.size(), 1u);
  const Call& call = s.calls[0];
  EXPECT_FALSE(call.metadata);
  EXPECT_FALSE(s.local_sizes);
  EXPECT_EQ(runs(call.tensors[0]), (std::vector<RowRun>{tokens(0, 0, 5)}));
  EXPECT_EQ(s.replay_rows_needed, 5);
  EXPECT_EQ(s.capture_rows_needed, 5);
}

TEST(DeriveStep, GatheredSpPath) {
  const Step s = step_of(make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered, true));
  ASSERT_EQ(s.calls.size(), 1u);
  const Call& call = s.calls[0];
  EXPECT_EQ(s.shard_rows, (V{2, 1}));
  EXPECT_EQ(s.local_sizes, (V{2, 2, 1, 1}));
  EXPECT_EQ(call.metadata->num_tokens_across_dp, (V{3, 2}));
  EXPECT_EQ(s.gathered_rows, 6);
  EXPECT_EQ(s.replay_rows_needed, 6);
  ASSERT_EQ(call.tensors.size(), 1u);
  EXPECT_EQ(runs(call.tensors[0]), (std::vector<RowRun>{tokens(0, 0, 3), padding(0, 3, 1), tokens(1, 0, 2)}));
  ASSERT_EQ(call.rank_count(), 4u);
  EXPECT_EQ(call.receipt, Receipt::shared);
  for (size_t r = 0; r < call.rank_count(); ++r) {
    const RankView v = call.view(r);
    EXPECT_EQ(v.received, 0);
    EXPECT_EQ(v.rows, (RowRange{0, 6}));
    EXPECT_EQ(v.tp_gathered, -1);
  }
}

TEST(DeriveStep, LocalPath) {
  const Step s = step_of(make_case(test::kDp2Tp2Ep, 8, {3, 2}, Path::local));
  const Call& call = s.calls[0];
  EXPECT_EQ(call.metadata->local_sizes, (V{3, 2}));
  EXPECT_EQ(runs(call.tensors[0]), (std::vector<RowRun>{tokens(0, 0, 3)}));
  EXPECT_EQ(runs(call.tensors[1]), (std::vector<RowRun>{tokens(1, 0, 2)}));
  EXPECT_EQ(call.view(3).received, 1);  // (1, 1) reads dp 1's batch
  EXPECT_EQ(call.view(3).rows, (RowRange{0, 2}));
  EXPECT_FALSE(s.replay_rows_needed);
}

TEST(DeriveStep, SpShardPathReceivesTheShardAndTheTpGather) {
  const Step s = step_of(make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::sp_shard));
  const Call& call = s.calls[0];
  // One tensor a DP rank (its padded batch, the TP all-gather of its shards); shard t is slice t.
  ASSERT_EQ(call.tensors.size(), 2u);
  EXPECT_EQ(call.receipt, Receipt::tp_slice);
  EXPECT_EQ(runs(call.tensors[0]), (std::vector<RowRun>{tokens(0, 0, 3), padding(0, 3, 1)}));
  EXPECT_EQ(runs(call.tensors[1]), (std::vector<RowRun>{tokens(1, 0, 2)}));
  EXPECT_EQ(runs(call.input_of(call.view(0))), (std::vector<RowRun>{tokens(0, 0, 2)}));
  EXPECT_EQ(runs(call.input_of(call.view(1))), (std::vector<RowRun>{tokens(0, 2, 1), padding(0, 3, 1)}));
  EXPECT_EQ(runs(call.input_of(call.view(2))), (std::vector<RowRun>{tokens(1, 0, 1)}));
  EXPECT_EQ(runs(call.input_of(call.view(3))), (std::vector<RowRun>{tokens(1, 1, 1)}));
  EXPECT_EQ(call.view(1).received, 0);
  EXPECT_EQ(call.view(1).rows, (RowRange{2, 4}));
  EXPECT_EQ(call.view(1).tp_gathered, 0);
  EXPECT_EQ(call.view(2).received, 1);
  EXPECT_EQ(call.view(2).rows, (RowRange{0, 1}));
  EXPECT_EQ(call.view(2).tp_gathered, 1);
}

TEST(DeriveStep, CudagraphDummyTokensAreRoutedLikeRealOnes) {
  Case c = with_padding(make_case(test::kDp2, 8, {3, 1}, Path::gathered), {PaddingMode::cudagraph, {4, 8}});
  const Step s = step_of(c);
  EXPECT_EQ(s.num_tokens_across_dp, (V{4, 4}));
  EXPECT_EQ(s.real_tokens, (V{3, 1}));
  EXPECT_EQ(runs(s.calls[0].tensors[0]), (std::vector<RowRun>{tokens(0, 0, 4), tokens(1, 0, 4)}));
}

// docs/layout-contract.md 9.1: D = 2, U = 2, real tokens [10, 7]: P = 10, q = 5.
TEST(DeriveStep, MicrobatchesSplitAtPOverU) {
  Case c = make_case(test::kDp2, 16, {10, 7}, Path::local);
  c.padding.mode = PaddingMode::dp_max;
  c.microbatches = 2;
  const Step s = step_of(c);
  ASSERT_EQ(s.calls.size(), 2u);
  EXPECT_EQ(s.num_tokens_across_dp, (V{10, 10}));
  for (int i = 0; i < 2; ++i) {
    const Call& call = s.calls[i];
    EXPECT_EQ(call.row_offset, 5 * i);
    EXPECT_EQ(call.tokens, (std::vector<RowRange>(2, RowRange{5 * i, 5 * i + 5})));
    EXPECT_EQ(call.metadata->num_tokens_across_dp, (V{5, 5}));
    EXPECT_EQ(call.metadata->local_sizes, (V{5, 5}));
    EXPECT_EQ(runs(call.tensors[1]), (std::vector<RowRun>{tokens(1, 5 * i, 5)}));
  }
}

TEST(DeriveStep, LastMicrobatchTakesTheRemainderWithSp) {
  Case c = make_case(test::kDp2Tp2EpSp, 16, {7, 3}, Path::sp_shard);
  c.padding.mode = PaddingMode::dp_max;
  c.microbatches = 2;
  const Step s = step_of(c);
  ASSERT_EQ(s.calls.size(), 2u);
  const Call& last = s.calls[1];  // tokens [3, 7): u = 4, shards of 2
  EXPECT_EQ(last.metadata->num_tokens_across_dp, (V{4, 4}));
  EXPECT_EQ(last.metadata->local_sizes, (V{2, 2, 2, 2}));
  EXPECT_EQ(runs(last.input_of(last.view(0, 1))), (std::vector<RowRun>{tokens(0, 5, 2)}));
  EXPECT_EQ(runs(s.calls[0].input_of(s.calls[0].view(0, 1))), (std::vector<RowRun>{tokens(0, 2, 1), padding(0, 3, 1)}));
}

TEST(DeriveStep, MicrobatchedGatheredKernelRowsArePerCall) {
  Case c = make_case(test::kDp2Tp2EpSp, 16, {7, 3}, Path::gathered, true);
  c.padding.mode = PaddingMode::dp_max;
  c.microbatches = 2;
  const Step s = step_of(c);
  EXPECT_EQ(s.calls[0].kernel_rows, 8);   // u = 3: 2 * 2 * ceil(3/2)
  EXPECT_EQ(s.calls[1].kernel_rows, 8);   // u = 4
  EXPECT_EQ(s.replay_rows_needed, 8);
}

// docs/layout-contract.md 9.2, local path: n = [5, 2], C = 2: three chunks; dp 1 finishes after one and reruns its last row.
TEST(DeriveStep, DpChunksOnTheLocalPath) {
  Case c = make_case(test::kDp2, 8, {5, 2}, Path::local);
  c.dp_chunk = 2;
  const Step s = step_of(c);
  ASSERT_EQ(s.calls.size(), 3u);
  const std::vector<V> local_sizes = {{2, 2}, {2, 1}, {1, 1}};
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(s.calls[k].metadata->num_tokens_across_dp, (V{5, 2}));
    EXPECT_EQ(s.calls[k].metadata->local_sizes, local_sizes[k]);
    EXPECT_EQ(s.calls[k].row_offset, static_cast<int64_t>(2 * k));
    EXPECT_EQ(s.calls[k].chunk_size, 2);
  }
  EXPECT_EQ(runs(s.calls[2].tensors[0]), (std::vector<RowRun>{tokens(0, 4, 1)}));
  EXPECT_EQ(runs(s.calls[1].tensors[1]), (std::vector<RowRun>{tokens(1, 1, 1)}));
  EXPECT_EQ(s.calls[1].tokens[1], (RowRange{2, 2}));
}

TEST(DeriveStep, DpChunksOnTheSpShardPath) {  // n = [5, 0], T = 2: per-TP rows 3 and 0; C = 2
  Case c = make_case(test::kDp2Tp2EpSp, 8, {5, 0}, Path::sp_shard);
  c.dp_chunk = 2;
  const Step s = step_of(c);
  ASSERT_EQ(s.calls.size(), 2u);
  EXPECT_EQ(s.calls[0].metadata->local_sizes, (V{2, 2, 1, 1}));
  EXPECT_EQ(s.calls[1].metadata->local_sizes, (V{1, 1, 1, 1}));
  // Chunk 1 of (0, 1): padded rows [5, 6): SP padding row 5.
  const Call& second = s.calls[1];
  EXPECT_EQ(runs(second.input_of(second.view(0, 1))), (std::vector<RowRun>{padding(0, 5, 1)}));
  // Tensor 0, dp 0's TP all-gather: the chunks of TP ranks 0 and 1 in turn.
  EXPECT_EQ(second.view(0, 1).tp_gathered, 0);
  EXPECT_EQ(runs(second.tensors[0]), (std::vector<RowRun>{tokens(0, 2, 1), padding(0, 5, 1)}));
  // dp 1 never had a row: forward_impl_chunked slices x[-1:0] of its empty tensor, so capture
  // gets 0 rows, while its local_sizes entry is 1 (the all-gather still takes one row from it).
  EXPECT_TRUE(runs(s.calls[0].input_of(s.calls[0].view(1, 0))).empty());
  EXPECT_TRUE(runs(second.input_of(second.view(1, 1))).empty());
}

TEST(DeriveStep, MetadataOverrideThatAgreesIsNoRejection) {
  Case c = make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered);
  c.metadata = MetadataOverride{V{3, 2}, true, V{2, 2, 1, 1}};
  EXPECT_FALSE(step_of(c).rejection);
}

TEST(DeriveStep, MetadataOverrideRejections) {
  auto rejection = [](MetadataOverride m, Topology topo = test::kDp2Tp2EpSp) {
    Case c = make_case(topo, 8, topo.dp == 1 ? V{3} : V{3, 2}, topo.dp == 1 ? Path::single : Path::gathered);
    c.metadata = std::move(m);
    return step_of(c).rejection.value_or("(none)");
  };
  EXPECT_EQ(rejection({{}, true, std::nullopt}),
            "metadata.local_sizes: unset on a step with DP metadata (the layout gives [2, 2, 1, 1])");
  EXPECT_EQ(rejection({{}, true, V{3, 2}}), "metadata.local_sizes: has 2 entries, the layout has 4 (dp*tp with sp)");
  EXPECT_EQ(rejection({{}, true, V{2, 2, 1, 2}}), "metadata.local_sizes[3] = 2, the layout gives 1");
  EXPECT_EQ(rejection({V{3, 2, 0}, false, {}}), "metadata.num_tokens_across_dp: has 3 entries for dp 2");
  EXPECT_EQ(rejection({V{2, 3}, false, {}}),
            "metadata.num_tokens_across_dp[0] = 2, but rank 0 runs 3 rows");
  EXPECT_EQ(rejection({V{3}, false, {}}, test::kSingle),
            "metadata: a single-rank step (dp 1) has no DP metadata, yet the override gives some");
  EXPECT_EQ(rejection({{}, true, V{3, 2}}, test::kDp2Tp2Ep), "(none)");
}

TEST(DeriveStep, MetadataOverrideReplacesWhatCaptureSees) {
  Case c = make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered);
  c.metadata = MetadataOverride{V{2, 3}, true, std::nullopt};
  const Step s = step_of(c);
  EXPECT_EQ(s.calls[0].metadata->num_tokens_across_dp, (V{2, 3}));
  EXPECT_FALSE(s.calls[0].metadata->local_sizes);
  EXPECT_EQ(s.num_tokens_across_dp, (V{3, 2}));  // the counts ranks really run never change
}

// ---- properties -------------------------------------------------------------------------

// derive_step_into reuses the storage of whatever step it is given: deriving case b over the
// step of case a must give exactly the step derive_step(b) gives, whatever a was (an SGLang
// step over a vLLM one, a chunked step over a single call, an override over none).
void expect_same_metadata(const std::optional<DpMetadata>& got, const std::optional<DpMetadata>& want) {
  RC_ASSERT(got.has_value() == want.has_value());
  if (!want) return;
  RC_ASSERT(got->num_tokens_across_dp == want->num_tokens_across_dp);
  RC_ASSERT(got->local_sizes == want->local_sizes);
  RC_ASSERT(got->token_prefix == want->token_prefix);
  RC_ASSERT(got->local_prefix == want->local_prefix);
}

void expect_same_segments(const std::vector<Segment>& got, const std::vector<Segment>& want) {
  RC_ASSERT(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const Segment &a = got[i], &b = want[i];
    RC_ASSERT(a.dp == b.dp && a.tp == b.tp && a.group_rank == b.group_rank && a.offset == b.offset &&
              a.rows == b.rows && a.token_rows == b.token_rows && a.padding_rows == b.padding_rows);
  }
}

void expect_same_step(const Step& got, const Step& want) {
  RC_ASSERT(got.engine == want.engine);
  RC_ASSERT(got.dp == want.dp && got.tp == want.tp && got.sp == want.sp && got.path == want.path);
  RC_ASSERT(got.layer == want.layer && got.max_num_tokens == want.max_num_tokens);
  RC_ASSERT(got.real_tokens == want.real_tokens);
  RC_ASSERT(got.num_tokens_across_dp == want.num_tokens_across_dp);
  RC_ASSERT(got.shard_rows == want.shard_rows);
  RC_ASSERT(got.local_sizes == want.local_sizes);
  RC_ASSERT(got.gathered_rows == want.gathered_rows);
  RC_ASSERT(got.capture_rows_needed == want.capture_rows_needed);
  RC_ASSERT(got.replay_rows_needed == want.replay_rows_needed);
  RC_ASSERT(got.rejection == want.rejection);
  RC_ASSERT(got.engine_step.has_value() == want.engine_step.has_value());
  RC_ASSERT(got.calls.size() == want.calls.size());
  for (size_t k = 0; k < want.calls.size(); ++k) {
    const Call &a = got.calls[k], &b = want.calls[k];
    RC_ASSERT(a.index == b.index);
    expect_same_metadata(a.metadata, b.metadata);
    RC_ASSERT(a.tokens == b.tokens);
    RC_ASSERT(a.row_offset == b.row_offset && a.chunk_size == b.chunk_size);
    expect_same_segments(a.segments, b.segments);
    RC_ASSERT(a.gathered_rows == b.gathered_rows && a.kernel_rows == b.kernel_rows);
    RC_ASSERT(a.dp_size == b.dp_size && a.tp_size == b.tp_size);
    RC_ASSERT(a.receipt == b.receipt && a.tp_gather == b.tp_gather);
    RC_ASSERT(a.tensors.size() == b.tensors.size());
    for (size_t i = 0; i < b.tensors.size(); ++i) RC_ASSERT(runs(a.tensors[i]) == runs(b.tensors[i]));
  }
}

RC_GTEST_PROP(LayoutProperty, DerivingIntoAStepGivesWhatDerivingAfreshGives, ()) {
  const test::CaseGenOptions o{.microbatches = true, .dp_chunk = true, .extras = true, .engine = std::nullopt};
  const Case a = *test::gen_valid_case(o);
  const Case b = *test::gen_valid_case(o);
  Step s;
  RC_ASSERT(derive_step_into(s, a).ok());
  RC_ASSERT(derive_step_into(s, b).ok());
  expect_same_step(s, *derive_step(b));
}

TEST(DeriveStepInto, AnInvalidCaseIsTheErrorDeriveStepGives) {
  Case c = make_case({2, 1, false, false}, 8, {3, 9}, Path::local);  // 9 tokens on a rank, M = 8
  Step s;
  const Status into = derive_step_into(s, c);
  const Result<Step> fresh = derive_step(c);
  ASSERT_FALSE(into.ok());
  ASSERT_FALSE(fresh.ok());
  EXPECT_EQ(into.error().message, fresh.error().message);
}

RC_GTEST_PROP(LayoutProperty, GatheredSegmentsPartitionTheGatheredRows, ()) {
  const Case c = *test::gen_valid_case({.min_dp = 2});
  const Step s = *derive_step(c);
  int64_t next = 0;
  // A one-call step's call carries the whole step's layout.
  const std::vector<Segment> segments = s.calls[0].segments;
  RC_PRE(s.calls.size() == 1 && !segments.empty());
  for (const Segment& g : segments) {
    RC_ASSERT(g.offset == next);
    RC_ASSERT(g.rows == g.token_rows + g.padding_rows);
    RC_ASSERT(g.rows == (*s.local_sizes)[static_cast<size_t>(g.group_rank)]);
    next += g.rows;
  }
  RC_ASSERT(next == s.gathered_rows);
  RC_ASSERT(s.calls[0].gathered_rows == s.gathered_rows);
}

RC_GTEST_PROP(LayoutProperty, EachRanksTokensAppearOnceInOrder, ()) {
  Case c = *test::gen_valid_case({.min_dp = 2});
  c.path = Path::gathered;
  const Step s = *derive_step(c);
  std::vector<int64_t> next(static_cast<size_t>(s.dp), 0);
  for (const RowRun& run : s.calls[0].tensors[0].runs()) {
    if (run.kind != RowKind::token) continue;
    RC_ASSERT(run.first == next[static_cast<size_t>(run.dp)]);
    next[static_cast<size_t>(run.dp)] += run.length;
  }
  RC_ASSERT(next == s.num_tokens_across_dp);
}

RC_GTEST_PROP(LayoutProperty, PaddingRowsOfRankAreTpTimesShardMinusCount, ()) {
  const Case c = *test::gen_valid_case({.force_sp = true});
  const Step s = *derive_step(c);
  std::vector<int64_t> padding(static_cast<size_t>(s.dp), 0);
  for (const Segment& g : derive_segments(s.num_tokens_across_dp, s.tp, s.sp)) padding[static_cast<size_t>(g.dp)] += g.padding_rows;
  for (int d = 0; d < s.dp; ++d) {
    const int64_t n = s.num_tokens_across_dp[static_cast<size_t>(d)];
    RC_ASSERT(padding[static_cast<size_t>(d)] == s.tp * ceil_div(n, s.tp) - n);
  }
}

RC_GTEST_PROP(LayoutProperty, SpShardsConcatenateBackToTheRanksBatch, ()) {
  Case c = *test::gen_valid_case({.force_sp = true});
  c.path = Path::sp_shard;
  c.monolithic = false;
  const Step s = *derive_step(c);
  const Call& call = s.calls[0];
  for (int d = 0; d < s.dp; ++d) {
    RowTensor joined;
    for (int t = 0; t < s.tp; ++t) {
      const RowTensor shard = call.input_of(call.view(d, t));
      RC_ASSERT(shard.rows() == s.shard_rows[static_cast<size_t>(d)]);
      joined.append_slice(shard, {0, shard.rows()});
    }
    const int64_t n = s.num_tokens_across_dp[static_cast<size_t>(d)];
    RowTensor batch;
    batch.append({n, RowKind::token, d, 0});
    batch.append({joined.rows() - n, RowKind::sp_padding, d, n});
    RC_ASSERT(runs(joined) == runs(batch));
    RC_ASSERT(runs(call.tensors[static_cast<size_t>(call.view(d, 0).tp_gathered)]) == runs(batch));
  }
}

// docs/layout-contract.md section 6: G <= D*(M + T - 1) <= D*T*M when every n_d <= M, so dispatch_group sizing suffices.
RC_GTEST_PROP(LayoutProperty, DispatchGroupSizingHoldsWhenEveryCountFitsM, ()) {
  Case c = *test::gen_valid_case({.min_dp = 2});
  c.topology.ep = c.topology.ep || c.topology.sp;
  const Step s = *derive_step(c);
  const int64_t most = *std::max_element(s.num_tokens_across_dp.begin(), s.num_tokens_across_dp.end());
  RC_PRE(most <= c.max_num_tokens);
  const int64_t group = c.topology.ep ? int64_t{c.topology.dp} * c.topology.tp : c.topology.dp;
  RC_ASSERT(s.gathered_rows <= c.max_num_tokens * group);
}

TEST(LayoutFacts, DispatchGroupSizingFailsWhenACountExceedsM) {
  // A CUDA-graph bucket of 16 above M = 8 on DP2 (EP, TP1): G = 32 > M*D*T = 16.
  Case c = with_padding(make_case({2, 1, true, false}, 8, {8, 8}, Path::gathered, true), {PaddingMode::cudagraph, {16}});
  const Step s = step_of(c);
  EXPECT_EQ(s.gathered_rows, 32);
  EXPECT_GT(s.gathered_rows, c.max_num_tokens * 2 * 1);
}

}  // namespace
}  // namespace r3
