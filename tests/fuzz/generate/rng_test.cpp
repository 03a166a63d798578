#include "fuzz/generate/rng.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

// The high half of a*b by 32-bit limbs: what Rng::below must equal on every machine, whichever
// product the compiler gives it.
uint64_t high_half_by_limbs(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32, b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
  const uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
  const uint64_t mid = (p0 >> 32) + (p1 & 0xFFFFFFFFu) + (p2 & 0xFFFFFFFFu);
  return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

TEST(Rng, BelowIsTheHighHalfOfTheNextWordTimesTheBound) {
  Rng drawn(20261201), words(20261201), bounds(7);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t n = i % 3 == 0 ? bounds.next() : bounds.next() % 1000 + 1;  // huge bounds and small ones
    ASSERT_EQ(drawn.below(n), high_half_by_limbs(words.next(), n)) << "draw " << i << ", n " << n;
  }
}

TEST(Rng, BelowStaysUnderTheBound) {
  Rng r(1);
  for (uint64_t n : {uint64_t{1}, uint64_t{2}, uint64_t{100}, ~uint64_t{0}})
    for (int i = 0; i < 1000; ++i) ASSERT_LT(r.below(n), n);
}

// A seed means the same cases on every machine: seed 1's first words and draws, as an
// independent xoshiro256** (seeded through splitmix64) computes them.
TEST(Rng, SeedOneDrawsTheSameWordsEverywhere) {
  Rng r(1);
  EXPECT_EQ(r.next(), 0xb3f2af6d0fc710c5ull);
  EXPECT_EQ(r.next(), 0x853b559647364ceaull);
  EXPECT_EQ(r.next(), 0x92f89756082a4514ull);
  Rng s(1);
  EXPECT_EQ(s.below(1000), 702u);
  EXPECT_EQ(s.below((uint64_t{1} << 63) + 12345), 4800180567299276685ull);
}

}  // namespace
}  // namespace r3
