// Count vectors in the spaces' order: the token (or request) layouts every engine's exhaustive
// space enumerates (case_space.cpp's UnitStream), made one at a time and counted without being
// made, so that neither the search nor its upfront count holds a list of them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace r3::exhaust {

// a * b + c, saturating at INT64_MAX (the counts of huge bounds only need to be "too many").
inline int64_t saturating_add_product(int64_t c, int64_t a, int64_t b) {
  int64_t product = 0, sum = 0;
  if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(c, product, &sum))
    return std::numeric_limits<int64_t>::max();
  return sum;
}

// The vectors of length `dp`, each entry in 0..cap, with sums 0..max_sum: by increasing sum, and
// in lexicographic order within a sum. Only the current vector is held.
class CountVectors {
 public:
  CountVectors(int dp, int64_t max_sum, int64_t cap)
      : max_sum_(max_sum), cap_(cap), v_(static_cast<size_t>(dp), 0) {}

  bool done() const { return sum_ > max_sum_; }
  const std::vector<int64_t>& operator*() const { return v_; }

  void next() {
    // The rightmost entry that can grow by one while the entries after it give that one back;
    // they then take their smallest arrangement (filled from the right).
    int64_t after = v_.back();
    for (size_t i = v_.size() - 1; i-- > 0;) {
      if (v_[i] < cap_ && after > 0) {
        ++v_[i];
        fill_from_right(i + 1, after - 1);
        return;
      }
      after += v_[i];
    }
    // The last vector of this sum: the first of the next, if any fits.
    ++sum_;
    if (sum_ > static_cast<int64_t>(v_.size()) * cap_) sum_ = max_sum_ + 1;
    if (!done()) fill_from_right(0, sum_);
  }

 private:
  void fill_from_right(size_t from, int64_t total) {
    for (size_t j = v_.size(); j-- > from;) {
      v_[j] = std::min(cap_, total);
      total -= v_[j];
    }
  }

  int64_t max_sum_;
  int64_t cap_;
  int64_t sum_ = 0;
  std::vector<int64_t> v_;  // starts as the only vector of sum 0
};

// How many vectors of length `dp`, each entry in 0..cap, sum to at most `total` (saturating).
inline int64_t count_vectors_up_to(int dp, int64_t total, int64_t cap) {
  if (cap < 0) return 0;
  std::vector<int64_t> ways(static_cast<size_t>(total + 1), 0);  // ways[s]: vectors so far summing to s
  ways[0] = 1;
  for (int d = 0; d < dp; ++d) {
    std::vector<int64_t> next(ways.size(), 0);
    for (int64_t s = 0; s <= total; ++s)
      for (int64_t v = 0; v <= cap && s + v <= total; ++v)
        next[static_cast<size_t>(s + v)] = saturating_add_product(next[static_cast<size_t>(s + v)], ways[static_cast<size_t>(s)], 1);
    ways = std::move(next);
  }
  int64_t count = 0;
  for (int64_t w : ways) count = saturating_add_product(count, w, 1);
  return count;
}

// For each m in 0..min(max_sum, cap): how many CountVectors(dp, max_sum, cap) has whose largest
// entry is m. A unit's cases depend on its largest count alone, so the spaces are counted by it.
inline std::vector<int64_t> count_vectors_by_largest(int dp, int64_t max_sum, int64_t cap) {
  std::vector<int64_t> out;
  int64_t below = 0;
  for (int64_t m = 0; m <= std::min(max_sum, cap); ++m) {
    const int64_t up_to = count_vectors_up_to(dp, max_sum, m);
    out.push_back(up_to - below);
    below = up_to;
  }
  return out;
}

}  // namespace r3::exhaust
