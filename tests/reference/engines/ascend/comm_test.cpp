// The comm type (reference/engines/ascend/comm.cpp; spec 2.1): each SoC's rule in order.
#include "reference/engines/ascend/comm.hpp"

#include <gtest/gtest.h>

#include "tests/support/ascend_fixtures.hpp"

namespace r3::ascend {
namespace {

Comm comm(const Case& c, int64_t largest) { return derive_comm(c, *fields_of(c), largest); }

TEST(AscendComm, EpOffOrEpOfOneIsAllgather) {
  EXPECT_EQ(comm(test::ascend_case(2, 2, false, false, {1, 1}), 1), Comm::allgather);
  EXPECT_EQ(comm(test::ascend_case(1, 1, true, false, {1}), 1), Comm::allgather);
}

TEST(AscendComm, LoraWithEpIsAlltoall) {
  Case c = test::ascend_case(1, 2, true, false, {5});
  fields_of(c)->lora = true;
  EXPECT_EQ(comm(c, 5), Comm::alltoall);
}

TEST(AscendComm, CapacityIsCeilOfBaseOverTpCappedPerRank) {
  Case c = test::ascend_case(1, 2, true, false, {5});
  EXPECT_EQ(mc2_capacity(c, *fields_of(c)), 16);  // B = M = 16: ceil(16/2) * 2
  fields_of(c)->mc2_tokens = 5000;
  EXPECT_EQ(mc2_capacity(c, *fields_of(c)), 1024);  // min(2500, 512) * 2
  fields_of(c)->fused_mc2 = true;
  fields_of(c)->mega_moe = true;
  EXPECT_EQ(mc2_capacity(c, *fields_of(c)), 5000);  // min(2500, 4096) * 2
  c.padding = {PaddingMode::cudagraph, {4, 8}};
  fields_of(c)->mc2_tokens = 0;
  EXPECT_EQ(mc2_capacity(c, *fields_of(c)), 8);  // the largest capture size
}

TEST(AscendComm, A3PrefersFusedThenMc2WithinCapacityElseAlltoall) {
  Case c = test::ascend_case(1, 2, true, false, {5});
  EXPECT_EQ(comm(c, 16), Comm::mc2);
  EXPECT_EQ(comm(c, 17), Comm::alltoall);
  fields_of(c)->fused_mc2 = true;
  EXPECT_EQ(comm(c, 17), Comm::fused_mc2);
  c.topology = {4, 16, true, false};  // EP 64 > 32 without mega_moe
  EXPECT_EQ(comm(c, 1), Comm::mc2);
  fields_of(c)->mega_moe = true;
  EXPECT_EQ(comm(c, 1), Comm::fused_mc2);
}

TEST(AscendComm, A2NeedsSixteenRanksAndFewExpertsPerRank) {
  Case c = test::ascend_case(2, 2, true, false, {1, 1}, Chip::a2);
  EXPECT_EQ(comm(c, 1), Comm::allgather);  // EP 4 < 16
  c.topology = {4, 4, true, false};
  EXPECT_EQ(comm(c, 1), Comm::mc2);  // 64 / 16 = 4 experts a rank
  c.model.experts = 512;
  EXPECT_EQ(comm(c, 1), Comm::allgather);  // 32 experts a rank
}

TEST(AscendComm, A5AndP310) {
  Case c = test::ascend_case(1, 2, true, false, {5}, Chip::a5);
  EXPECT_EQ(comm(c, 16), Comm::mc2);
  EXPECT_EQ(comm(c, 17), Comm::allgather);  // world 2 <= top_k 2
  c.topology = {2, 2, true, false};
  EXPECT_EQ(comm(c, 17), Comm::alltoall);
  fields_of(c)->chip = Chip::p310;
  EXPECT_EQ(comm(c, 1), Comm::allgather);
}

}  // namespace
}  // namespace r3::ascend
