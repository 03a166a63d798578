#include "reference/trace/route.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace r3 {
namespace {

TEST(Route, PrefixHashesChainTheTokens) {
  const std::vector<uint64_t> h = prefix_hashes(std::vector<int32_t>{5, 6, 7});
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0], extend_prefix_hash(kPrefixHashBasis, 5));
  EXPECT_EQ(h[2], extend_prefix_hash(extend_prefix_hash(h[0], 6), 7));
  EXPECT_EQ(prefix_hashes(std::vector<int32_t>{5, 6, 8})[1], h[1]);  // a shared prefix shares its hashes
  EXPECT_NE(prefix_hashes(std::vector<int32_t>{5, 6, 8})[2], h[2]);
}

TEST(Route, ExpertsAreDistinctInRangeAndDependOnLayerAndVersion) {
  const uint64_t h = prefix_hashes(std::vector<int32_t>{5, 6, 7})[2];
  for (int version = 0; version < 3; ++version) {
    std::vector<int32_t> e = route_experts(h, 0, version, 4, 4);  // K == E: a permutation
    std::sort(e.begin(), e.end());
    EXPECT_EQ(e, (std::vector<int32_t>{0, 1, 2, 3}));
  }
  EXPECT_EQ(route_experts(h, 1, 0, 2, 1 << 16), route_experts(h, 1, 0, 2, 1 << 16));
  EXPECT_NE(route_experts(h, 0, 0, 2, 1 << 16), route_experts(h, 1, 0, 2, 1 << 16));
  EXPECT_NE(route_experts(h, 0, 0, 2, 1 << 16), route_experts(h, 0, 1, 2, 1 << 16));
}

TEST(Route, DescribeNamesTheSource) {
  EXPECT_EQ(describe({RouteRef::Kind::route, 0, 4, 1}), "the route of request 0 position 4 at weight version 1");
  EXPECT_EQ(describe({RouteRef::Kind::draft, 2, 7, 0}), "a rejected draft row of request 2 position 7");
  EXPECT_EQ(describe({RouteRef::Kind::padding}), "a padding row");
  EXPECT_EQ(describe({RouteRef::Kind::never_written}), "a row nothing wrote (zeros)");
}

}  // namespace
}  // namespace r3
