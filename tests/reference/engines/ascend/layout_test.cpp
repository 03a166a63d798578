// The rows each TP rank holds at capture, per comm type, with and without SP
// (reference/engines/ascend/layout.cpp; spec 2.3 and 2.4), and the counts.
#include "reference/engines/ascend/layout.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/ascend_fixtures.hpp"

namespace r3::ascend {
namespace {

Step step_of(const Case& c) {
  Result<Step> s = ascend::derive_step(c);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : Step{};
}

// Rank (d, t)'s rows: "d.j" for token j of DP rank d, "pad" for padding.
std::string rows(const Step& s, int d, int t) {
  const Call& call = s.calls.front();
  const RowTensor in = call.input_of(call.view(d, t));
  std::string out;
  for (int64_t r = 0; r < in.rows(); ++r) {
    const RowId id = in.at(r);
    out += (r ? " " : "") + (id.kind == RowKind::token ? std::to_string(id.dp) + "." + std::to_string(id.index) : std::string("pad"));
  }
  return out;
}

TEST(AscendLayout, AllgatherOneDpRankHoldsTheBatch) {
  const Step s = step_of(test::ascend_case(1, 2, false, false, {3}));
  EXPECT_EQ(step_fields_of(s)->comm, Comm::allgather);
  EXPECT_FALSE(s.calls.front().metadata);
  EXPECT_EQ(rows(s, 0, 0), "0.0 0.1 0.2");
  EXPECT_EQ(rows(s, 0, 1), "0.0 0.1 0.2");
}

TEST(AscendLayout, AllgatherWithoutSpPadsEveryBatchToMax) {
  const Step s = step_of(test::ascend_case(2, 2, false, false, {1, 3}));
  EXPECT_EQ(rows(s, 0, 1), "0.0 pad pad 1.0 1.1 1.2");
  EXPECT_EQ(rows(s, 1, 0), "0.0 pad pad 1.0 1.1 1.2");
  EXPECT_EQ(rows_held(Comm::allgather, false, {1, 3}, 1, 0, 2), 6);
}

TEST(AscendLayout, AllgatherWithSpGathersTheShardsUnpadded) {
  Case c = test::ascend_case(2, 2, true, true, {1, 3}, Chip::a2, Runner::mrv2);  // MRv2 eager: raw counts
  const Step s = step_of(c);
  EXPECT_EQ(step_fields_of(s)->comm, Comm::allgather);
  EXPECT_EQ(s.num_tokens_across_dp, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(rows(s, 0, 0), "0.0 pad 1.0 1.1 1.2 pad");
  EXPECT_EQ(rows_held(Comm::allgather, true, {1, 3}, 0, 0, 2), 6);
}

TEST(AscendLayout, V1RoundsSpCountsToTp) {
  const Step s = step_of(test::ascend_case(2, 2, true, true, {1, 3}, Chip::a2));
  EXPECT_EQ(s.num_tokens_across_dp, (std::vector<int64_t>{4, 4}));  // dp_max, then rounded to 2
  EXPECT_EQ(rows(s, 0, 0), "0.0 0.1 0.2 0.3 1.0 1.1 1.2 1.3");
}

TEST(AscendLayout, AlltoallSplitsCeilFirstThenFloor) {
  Case c = test::ascend_case(1, 2, true, false, {5});
  fields_of(c)->lora = true;
  const Step s = step_of(c);
  EXPECT_EQ(step_fields_of(s)->comm, Comm::alltoall);
  EXPECT_EQ(rows(s, 0, 0), "0.0 0.1 0.2");
  EXPECT_EQ(rows(s, 0, 1), "0.3 0.4");
  EXPECT_EQ(rows_held(Comm::alltoall, false, {5}, 0, 1, 2), 2);
}

TEST(AscendLayout, AlltoallPadsToTpBelowIt) {
  Case c = test::ascend_case(1, 4, true, false, {2});
  fields_of(c)->lora = true;
  const Step s = step_of(c);
  EXPECT_EQ(rows(s, 0, 0), "0.0");
  EXPECT_EQ(rows(s, 0, 1), "0.1");
  EXPECT_EQ(rows(s, 0, 3), "pad");
}

TEST(AscendLayout, Mc2PadsFromTheStepsLargestCount) {
  const Step s = step_of(test::ascend_case(2, 2, true, false, {2, 4}));
  EXPECT_EQ(step_fields_of(s)->comm, Comm::mc2);
  EXPECT_EQ(rows(s, 0, 0), "0.0 0.1");
  EXPECT_EQ(rows(s, 0, 1), "pad pad");
  EXPECT_EQ(rows(s, 1, 1), "1.2 1.3");
  EXPECT_EQ(rows_held(Comm::mc2, false, {2, 4}, 0, 1, 2), 2);
}

TEST(AscendLayout, Mc2OnOneTpRankHoldsMax) {
  const Step s = step_of(test::ascend_case(2, 1, true, false, {2, 4}));
  EXPECT_EQ(rows(s, 0, 0), "0.0 0.1 pad pad");
}

TEST(AscendLayout, SpShardsUnderAlltoallAndMc2) {
  Case c = test::ascend_case(2, 2, true, true, {3, 4}, Chip::a3, Runner::mrv2);
  const Step mc2 = step_of(c);
  EXPECT_EQ(step_fields_of(mc2)->comm, Comm::mc2);
  EXPECT_EQ(rows(mc2, 0, 0), "0.0 0.1");
  EXPECT_EQ(rows(mc2, 0, 1), "0.2 pad");
  fields_of(c)->lora = true;
  const Step a2a = step_of(c);
  EXPECT_EQ(step_fields_of(a2a)->comm, Comm::alltoall);
  EXPECT_EQ(rows(a2a, 0, 1), "0.2 pad");
  EXPECT_EQ(rows_held(Comm::alltoall, true, {3, 4}, 0, 1, 2), 2);
}

}  // namespace
}  // namespace r3::ascend
