#include "fuzz/exhaust/bounds.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(ExhaustBounds, DefaultsAreValidAndDescribed) {
  ExhaustBounds b;
  EXPECT_TRUE(validate(b).ok());
  EXPECT_EQ(describe(b), "D<=4 T<=4 sum(tokens)<=9 M<=9 L=2 K=1 E=4, profile vllm");
}

TEST(ExhaustBounds, OutOfRangeNamesTheFlag) {
  ExhaustBounds b;
  b.max_dp = 9;
  EXPECT_EQ(validate(b).error().message, "--max-dp: 9 is out of range [1, 8]");
  b = {};
  b.max_m = 0;
  EXPECT_EQ(validate(b).error().message, "--max-m: 0 is out of range [1, 32]");
  b = {};
  b.top_k = 5;
  EXPECT_EQ(validate(b).error().message, "--top-k: 5 is out of range [1, 4]");
}

}  // namespace
}  // namespace r3
