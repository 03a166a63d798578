#include "reference/rows.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

std::vector<RowRun> runs_of(const RowTensor& t) { return {t.runs().begin(), t.runs().end()}; }

TEST(RowTensor, AppendMergesContiguousRunsOfOneKind) {
  RowTensor t;
  t.append({2, RowKind::token, 1, 0});
  t.append({3, RowKind::token, 1, 2});
  t.append({0, RowKind::token, 1, 9});  // empty runs vanish
  t.append({1, RowKind::sp_padding, 1, 5});
  t.append({1, RowKind::placeholder, 0, 0});
  t.append({1, RowKind::placeholder, 0, 0});  // placeholders never merge: each is one rerun
  EXPECT_EQ(t.rows(), 8);
  EXPECT_EQ(runs_of(t), (std::vector<RowRun>{{5, RowKind::token, 1, 0},
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
  EXPECT_EQ(runs_of(t), (std::vector<RowRun>{{1, RowKind::token, 0, 2}, {1, RowKind::sp_padding, 0, 3},
                                           {1, RowKind::token, 1, 0}}));
  RowTensor empty;
  empty.append_slice(from, {6, 6});
  EXPECT_EQ(empty.rows(), 0);
}

// Two runs live inline, a third spills every run to the heap; clear() starts inline again.
TEST(RowTensor, KeepsItsRunsAcrossTheInlineLimit) {
  RowTensor t;
  t.reserve(4);  // room for fewer runs than appended: the fifth still spills
  for (int d = 0; d < 5; ++d) {
    t.append({d + 1, RowKind::token, d, 0});
    EXPECT_EQ(t.runs().size(), static_cast<size_t>(d + 1));
  }
  EXPECT_EQ(runs_of(t), (std::vector<RowRun>{{1, RowKind::token, 0, 0},
                                           {2, RowKind::token, 1, 0},
                                           {3, RowKind::token, 2, 0},
                                           {4, RowKind::token, 3, 0},
                                           {5, RowKind::token, 4, 0}}));
  EXPECT_EQ(t.rows(), 15);
  t.append({2, RowKind::token, 4, 5});  // merges into the last spilled run
  EXPECT_EQ(t.at(16), (RowId{RowKind::token, 4, 6}));
  const RowTensor copy = t;
  EXPECT_EQ(runs_of(copy), runs_of(t));
  t.clear();
  EXPECT_EQ(t.rows(), 0);
  t.append({3, RowKind::sp_padding, 7, 2});
  EXPECT_EQ(runs_of(t), (std::vector<RowRun>{{3, RowKind::sp_padding, 7, 2}}));
  EXPECT_EQ(t.at(2), (RowId{RowKind::sp_padding, 7, 4}));
}

TEST(RowTensor, RunHoldingBisectsTheRunStarts) {
  RowTensor t;
  t.append({2, RowKind::token, 0, 0});
  t.append({1, RowKind::sp_padding, 0, 2});
  t.append({4, RowKind::token, 1, 0});
  t.append({1, RowKind::placeholder, 2, 0});
  const std::vector<size_t> want = {0, 0, 1, 2, 2, 2, 2, 3};
  for (int64_t row = 0; row < t.rows(); ++row) EXPECT_EQ(t.run_holding(row), want[static_cast<size_t>(row)]) << row;
  EXPECT_EQ(t.run_start(0), 0);
  EXPECT_EQ(t.run_start(2), 3);
  EXPECT_EQ(t.run_start(3), 7);
}

TEST(RowTensor, Describe) {
  EXPECT_EQ(describe({RowKind::token, 1, 5}), "token (1, 5)");
  EXPECT_EQ(describe({RowKind::sp_padding, 0, 7}), "SP padding row 7 of dp 0");
  EXPECT_EQ(describe({RowKind::placeholder, 2, 0}), "the placeholder row of dp 2");
  EXPECT_EQ(describe({RowKind::untouched, 0, 3}), "an untouched row");
}

}  // namespace
}  // namespace r3
