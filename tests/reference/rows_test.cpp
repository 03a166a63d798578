#include "reference/rows.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(RowTensor, AppendMergesContiguousRunsOfOneKind) {
  RowTensor t;
  t.append({2, RowKind::token, 1, 0});
  t.append({3, RowKind::token, 1, 2});
  t.append({0, RowKind::token, 1, 9});  // empty runs vanish
  t.append({1, RowKind::sp_padding, 1, 5});
  t.append({1, RowKind::placeholder, 0, 0});
  t.append({1, RowKind::placeholder, 0, 0});  // placeholders never merge: each is one rerun
  EXPECT_EQ(t.rows(), 8);
  EXPECT_EQ(t.runs(), (std::vector<RowRun>{{5, RowKind::token, 1, 0},
                                           {1, RowKind::sp_padding, 1, 5},
                                           {1, RowKind::placeholder, 0, 0},
                                           {1, RowKind::placeholder, 0, 0}}));
  EXPECT_EQ(t.at(4), (RowId{RowKind::token, 1, 4}));
  EXPECT_EQ(t.at(5), (RowId{RowKind::sp_padding, 1, 5}));
  EXPECT_EQ(t.at(7), (RowId{RowKind::placeholder, 0, 0}));
}

TEST(RowTensor, DifferentRanksDoNotMerge) {
  RowTensor t;
  t.append({2, RowKind::token, 0, 0});
  t.append({2, RowKind::token, 1, 2});
  EXPECT_EQ(t.runs().size(), 2u);
}

TEST(RowTensor, AppendSliceCutsRuns) {
  RowTensor from;
  from.append({3, RowKind::token, 0, 0});
  from.append({1, RowKind::sp_padding, 0, 3});
  from.append({2, RowKind::token, 1, 0});
  RowTensor t;
  t.append_slice(from, {2, 5});
  EXPECT_EQ(t.runs(), (std::vector<RowRun>{{1, RowKind::token, 0, 2}, {1, RowKind::sp_padding, 0, 3},
                                           {1, RowKind::token, 1, 0}}));
  RowTensor empty;
  empty.append_slice(from, {6, 6});
  EXPECT_EQ(empty.rows(), 0);
}

TEST(RowTensor, Describe) {
  EXPECT_EQ(describe({RowKind::token, 1, 5}), "token (1, 5)");
  EXPECT_EQ(describe({RowKind::sp_padding, 0, 7}), "SP padding row 7 of dp 0");
  EXPECT_EQ(describe({RowKind::placeholder, 2, 0}), "the placeholder row of dp 2");
  EXPECT_EQ(describe({RowKind::untouched, 0, 3}), "an untouched row");
}

}  // namespace
}  // namespace r3
