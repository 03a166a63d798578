#include "reference/capturer.hpp"

#include <gtest/gtest.h>

#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

using test::make_case;

Step step_of(const Case& c) {
  auto s = derive_step(c);
  R3_CHECK(s.ok(), "test case is valid");
  return std::move(s).value();
}

TEST(Capturer, GatheredSpRankCopiesItsTokensPastThePadding) {
  const Step s = step_of(make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered));
  const Call& call = s.calls[0];
  EXPECT_EQ(expected_copies(call, call.view(2)), (std::vector<Copy>{{0, 4, 2, false}}));
  EXPECT_EQ(expected_source_range(call, call.view(2)), (RowRange{4, 6}));
  EXPECT_EQ(expected_source_range(call, call.view(1)), (RowRange{0, 3}));  // padding row 3 is not copied
}

TEST(Capturer, SpShardRankCopiesFromTheTpGather) {
  const Step s = step_of(make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::sp_shard));
  const Call& call = s.calls[0];
  // dp 0's TP all-gather: its padded batch, tokens (0, 0..2) then one padding row
  const RowTensor source = reference_source(call, call.view(1));
  EXPECT_EQ(std::vector<RowRun>(source.runs().begin(), source.runs().end()),
            (std::vector<RowRun>{{3, RowKind::token, 0, 0}, {1, RowKind::sp_padding, 0, 3}}));
  EXPECT_EQ(expected_copies(call, call.view(1)), (std::vector<Copy>{{0, 0, 3, true}}));
  EXPECT_EQ(expected_source_range(call, call.view(3)), (RowRange{0, 2}));
}

TEST(Capturer, IdleRankCopiesNothing) {
  const Step s = step_of(make_case(test::kDp2, 8, {3, 0}, Path::gathered));
  EXPECT_TRUE(expected_copies(s.calls[0], s.calls[0].view(1)).empty());
  EXPECT_EQ(expected_source_range(s.calls[0], s.calls[0].view(1)), (RowRange{0, 0}));
}

TEST(Capturer, MicrobatchCopiesLandAtTheirTokenIndex) {
  Case c = make_case(test::kDp2, 16, {10, 7}, Path::local);
  c.padding.mode = PaddingMode::dp_max;
  c.microbatches = 2;
  const Step s = step_of(c);
  EXPECT_EQ(expected_copies(s.calls[1], s.calls[1].view(1)), (std::vector<Copy>{{5, 0, 5, false}}));
}

// n = [5, 3], T = 2, C = 2: the gather holds tokens 0, 1 and 3, 4: one source range, two buffer ranges.
TEST(Capturer, ChunkedSpShardCopiesTwoPieces) {
  Case c = make_case(test::kDp2Tp2EpSp, 8, {5, 3}, Path::sp_shard);
  c.dp_chunk = 2;
  const Step s = step_of(c);
  const Call& call = s.calls[0];
  EXPECT_EQ(expected_copies(call, call.view(0)), (std::vector<Copy>{{0, 0, 2, true}, {3, 2, 2, true}}));
  EXPECT_EQ(expected_source_range(call, call.view(0)), (RowRange{0, 4}));
}

TEST(Capturer, CaptureCallCarriesWhatCaptureSees) {
  Case c = make_case(test::kDp2Tp2EpSp, 8, {5, 3}, Path::sp_shard);
  c.dp_chunk = 2;
  const Step s = step_of(c);
  const Call& call = s.calls[1];
  const CaptureCall cc = capture_call_for(s, call, call.view(3), {8, 4, 2});
  EXPECT_EQ(cc.dp_rank, 1);
  EXPECT_EQ(cc.tp_rank, 1);
  EXPECT_EQ(cc.dp_size, 2);
  EXPECT_EQ(cc.tp_size, 2);
  EXPECT_EQ(cc.rows, 1);  // dp 1 has 2 rows per TP rank, done after chunk 0: it reruns its last row
  EXPECT_EQ(cc.metadata, &*call.metadata);
  EXPECT_EQ(cc.layer, 1);
  EXPECT_EQ(cc.capture_buffer.rows, 8);
  EXPECT_EQ(cc.call_index, 1);
  EXPECT_EQ(cc.call_count, 2);
  EXPECT_EQ(cc.row_offset, 2);
  EXPECT_EQ(cc.chunk_size, 2);
}

TEST(Capturer, SingleCallHasNoMetadata) {
  const Step s = step_of(make_case(test::kSingle, 8, {5}, Path::single));
  const CaptureCall cc = capture_call_for(s, s.calls[0], s.calls[0].view(0), {8, 4, 2});
  EXPECT_EQ(cc.metadata, nullptr);
  EXPECT_EQ(cc.rows, 5);
  EXPECT_EQ(cc.call_count, 1);
  EXPECT_EQ(cc.chunk_size, 0);
}

}  // namespace
}  // namespace r3
