#include "fuzz/exhaust/bounds.hpp"

#include <gtest/gtest.h>

#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"

namespace r3 {
namespace {

TEST(ExhaustBounds, DefaultsAreValidAndDescribed) {
  ExhaustBounds b;
  EXPECT_TRUE(validate(b).ok());
  EXPECT_EQ(describe(b), "D<=4 T<=4 sum(tokens)<=9 M<=9 L=2 K=1 E=4, profile vllm");
}

// Under profile any the default engine's space reads as profile any always did; another
// engine's alone is named.
TEST(ExhaustBounds, ProfileAnyNamesAnEngineOtherThanTheDefault) {
  ExhaustBounds b{.max_dp = 3, .max_tp = 2, .max_tokens = 4, .max_m = 4, .profile = Profile::any()};
  EXPECT_EQ(describe(b), "D<=3 T<=2 sum(tokens)<=4 M<=4 L=2 K=1 E=4, profile any");
  b.engine = vllm::engine();
  EXPECT_EQ(describe(b), "D<=3 T<=2 sum(tokens)<=4 M<=4 L=2 K=1 E=4, profile any");
  b.engine = sglang::engine();
  EXPECT_EQ(describe(b), "D<=3 T<=2 sum(tokens)<=4 M<=4 L=2 K=1 E=4, profile any (sglang cases)");
  b.profile = Profile::of(sglang::engine(), 0);
  EXPECT_EQ(describe(b), "D<=3 T<=2 sum(tokens)<=4 M<=4 L=2 K=1 E=4, profile sglang");
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
