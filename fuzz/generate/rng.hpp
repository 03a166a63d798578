// A small, portable random source: xoshiro256** seeded through splitmix64, with our own
// integer mapping (std:: distributions differ between standard libraries, and the same seed
// must give the same cases on any machine).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>

namespace r3 {

constexpr uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& word : s_) word = splitmix64(seed);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n) for n >= 1 (multiply-shift: the bias is below 2^-40 for our ranges).
  uint64_t below(uint64_t n) { return mulhi(next(), n); }
  // Uniform in [lo, hi], lo <= hi.
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1)); }
  // True with probability percent/100.
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  // Roughly log-uniform in [1, hi]: small values as likely as large magnitudes.
  int64_t log_range(int64_t hi) {
    int bits = 0;
    while ((int64_t{1} << bits) < hi) ++bits;
    const int64_t top = std::min<int64_t>(hi, int64_t{1} << range(0, bits));
    return range(std::max<int64_t>(1, top / 2), top);
  }
  template <class T>
  T pick(std::initializer_list<T> options) {
    return options.begin()[below(options.size())];
  }

 private:
  // High 64 bits of a*b: exact either way, so every machine draws the same values; the 128-bit
  // product where the compiler has one (a case draws a few hundred values), else portable C++.
  static constexpr uint64_t mulhi(uint64_t a, uint64_t b) {
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 Wide;  // __extension__: a GCC and Clang type, said so to -Wpedantic
    return static_cast<uint64_t>((static_cast<Wide>(a) * b) >> 64);
#else
    const uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32, b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
    const uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
    const uint64_t mid = (p0 >> 32) + (p1 & 0xFFFFFFFFu) + (p2 & 0xFFFFFFFFu);
    return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
#endif
  }
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace r3
