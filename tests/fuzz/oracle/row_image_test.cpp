#include "fuzz/oracle/row_image.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

RowTensor batch(int dp, int64_t tokens, int64_t padding = 0) {
  RowTensor t;
  t.append({tokens, RowKind::token, dp, 0});
  t.append({padding, RowKind::sp_padding, dp, tokens});
  return t;
}

TEST(RowImage, AnImageOfTheRanksTokensHasNoDifference) {
  RowImage image;
  image.write(0, batch(1, 5), 0, 5, 0);
  EXPECT_FALSE(image.first_difference(1, 5));
  ASSERT_EQ(image.pieces().size(), 1u);
  EXPECT_EQ(image.pieces()[0].hi, 5);
}

TEST(RowImage, NamesAnUntouchedRowInsideTheBatch) {
  RowImage image;
  image.write(0, batch(0, 3), 0, 3, 0);
  auto diff = image.first_difference(0, 5);
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->row, 3);
  EXPECT_EQ(diff->got.kind, RowKind::untouched);
  EXPECT_EQ(diff->expected, (RowId{RowKind::token, 0, 3}));
  EXPECT_FALSE(diff->writer);
}

TEST(RowImage, NamesAWrongTokenAndItsWriter) {
  RowImage image;
  image.write(0, batch(0, 4), 1, 3, 0);  // tokens (0, 1..3) at rows 0..2
  auto diff = image.first_difference(0, 3);
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->row, 0);
  EXPECT_EQ(diff->got, (RowId{RowKind::token, 0, 1}));
  EXPECT_EQ(diff->expected, (RowId{RowKind::token, 0, 0}));
  ASSERT_TRUE(diff->writer);
  EXPECT_EQ(describe_run(diff->writer->source, diff->writer->hi - diff->writer->lo), "tokens (0, 1..3)");
}

TEST(RowImage, AWriteAfterTheBatchIsADifference) {
  RowImage image;
  image.write(0, batch(0, 2, 1), 0, 3, 0);
  auto diff = image.first_difference(0, 2);
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->row, 2);
  EXPECT_EQ(diff->got, (RowId{RowKind::sp_padding, 0, 2}));
  EXPECT_EQ(diff->expected.kind, RowKind::untouched);
}

TEST(RowImage, LaterWritesOverwriteAndSplitEarlierOnes) {
  RowImage image;
  image.write(0, batch(0, 10), 0, 10, 0);
  RowTensor other;
  other.append({2, RowKind::token, 1, 7});
  image.write(4, other, 0, 2, 1);
  ASSERT_EQ(image.pieces().size(), 3u);
  EXPECT_EQ(image.pieces()[0].hi, 4);
  EXPECT_EQ(image.pieces()[1].source, (RowRun{2, RowKind::token, 1, 7}));
  EXPECT_EQ(image.pieces()[1].call, 1);
  EXPECT_EQ(image.pieces()[2].lo, 6);
  EXPECT_EQ(image.pieces()[2].source.first, 6);  // the tail keeps its own identity
  auto diff = image.first_difference(0, 10);
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->row, 4);
  EXPECT_EQ(diff->got, (RowId{RowKind::token, 1, 7}));
}

TEST(RowImage, WritesAcrossRunsKeepEachRunsIdentity) {
  RowTensor from = batch(0, 2, 2);
  RowImage image;
  image.write(3, from, 1, 3, 0);  // token (0, 1), padding 2, padding 3 at rows 3..5
  ASSERT_EQ(image.pieces().size(), 2u);
  EXPECT_EQ(image.pieces()[0].lo, 3);
  EXPECT_EQ(image.pieces()[0].source, (RowRun{1, RowKind::token, 0, 1}));
  EXPECT_EQ(image.pieces()[1].source, (RowRun{2, RowKind::sp_padding, 0, 2}));
}

TEST(RowImage, DescribeRun) {
  EXPECT_EQ(describe_run({5, RowKind::token, 0, 5}, 5), "tokens (0, 5..9)");
  EXPECT_EQ(describe_run({1, RowKind::token, 1, 0}, 1), "token (1, 0)");
  EXPECT_EQ(describe_run({2, RowKind::sp_padding, 1, 3}, 2), "SP padding rows 3..4 of dp 1");
  EXPECT_EQ(describe_run({1, RowKind::placeholder, 2, 0}, 1), "the placeholder row of dp 2");
}

}  // namespace
}  // namespace r3
