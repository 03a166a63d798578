// The pieces both engines' traffic shares (fuzz/seed/traffic.hpp).
#include "fuzz/seed/traffic.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(Traffic, DecodeTargetsAreTheRangeEndsAndEachBucketInRangeWithItsNeighbours) {
  EXPECT_EQ(decode_targets({6, 17}, {1, 2, 4, 8, 16, 24}), (std::set<int64_t>{6, 7, 8, 9, 15, 16, 17}));
  EXPECT_EQ(decode_targets({3, 3}, {}), (std::set<int64_t>{3}));
}

TEST(Traffic, RequestsSpreadFromTheBusiestRank) {
  EXPECT_EQ(spread_over_ranks(4, 8), (std::vector<int64_t>{8, 5, 2, 7}));
  EXPECT_EQ(spread_over_ranks(1, 3), (std::vector<int64_t>{3}));
}

TEST(Traffic, MoreCasesThanTheBoundAreRefusedWithBothCounts) {
  EXPECT_TRUE(check_traffic_size({3074, kMaxTrafficCases - 3074}).ok());
  EXPECT_EQ(check_traffic_size({3074, 2 * 8192}).error().message,
            "traffic: seeds 19458 cases (3074 decode and 16384 prefill steps), at most 16384 (fewer prefill_lengths, "
            "or a narrower decode range)");
}

}  // namespace
}  // namespace r3
