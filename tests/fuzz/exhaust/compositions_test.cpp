// Count vectors made one at a time and counted without being made (fuzz/exhaust/compositions.hpp):
// both agree with listing every vector of [0, cap]^dp and sorting the ones in range.
#include "fuzz/exhaust/compositions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>

namespace r3::exhaust {
namespace {

using Vectors = std::vector<std::vector<int64_t>>;

// Every vector of length dp with entries in 0..cap and a sum of at most max_sum, by sum, then
// lexicographically: the order the spaces state.
Vectors brute_force(int dp, int64_t max_sum, int64_t cap) {
  Vectors all;
  std::vector<int64_t> v(static_cast<size_t>(dp), 0);
  for (;;) {
    if (std::accumulate(v.begin(), v.end(), int64_t{0}) <= max_sum) all.push_back(v);
    size_t i = v.size();
    while (i > 0 && v[i - 1] == cap) v[--i] = 0;
    if (i == 0) break;
    ++v[i - 1];
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    const int64_t sa = std::accumulate(a.begin(), a.end(), int64_t{0}), sb = std::accumulate(b.begin(), b.end(), int64_t{0});
    return std::tie(sa, a) < std::tie(sb, b);
  });
  return all;
}

TEST(CountVectors, MakesExactlyTheVectorsInTheSpacesOrder) {
  for (int dp = 1; dp <= 4; ++dp) {
    for (int64_t max_sum = 0; max_sum <= 7; ++max_sum) {
      for (int64_t cap = 0; cap <= 4; ++cap) {
        Vectors made;
        for (CountVectors v(dp, max_sum, cap); !v.done(); v.next()) made.push_back(*v);
        EXPECT_EQ(made, brute_force(dp, max_sum, cap)) << "dp " << dp << " max_sum " << max_sum << " cap " << cap;
      }
    }
  }
}

TEST(CountVectors, AreCountedByTheirLargestEntryWithoutBeingMade) {
  for (int dp = 1; dp <= 4; ++dp) {
    for (int64_t max_sum = 0; max_sum <= 7; ++max_sum) {
      for (int64_t cap = 1; cap <= 4; ++cap) {
        std::vector<int64_t> want(static_cast<size_t>(std::min(max_sum, cap) + 1), 0);
        for (const auto& v : brute_force(dp, max_sum, cap)) ++want[static_cast<size_t>(*std::max_element(v.begin(), v.end()))];
        EXPECT_EQ(count_vectors_by_largest(dp, max_sum, cap), want) << "dp " << dp << " max_sum " << max_sum << " cap " << cap;
      }
    }
  }
  // exhaust's largest bounds: C(40, 8) vectors of 8 entries summing to at most 32.
  const std::vector<int64_t> by_largest = count_vectors_by_largest(8, 32, 32);
  EXPECT_EQ(std::accumulate(by_largest.begin(), by_largest.end(), int64_t{0}), 76904685);
}

TEST(SaturatingAddProduct, SaturatesInsteadOfWrapping) {
  EXPECT_EQ(saturating_add_product(1, 2, 3), 7);
  EXPECT_EQ(saturating_add_product(0, int64_t{1} << 40, int64_t{1} << 40), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace r3::exhaust
