// Count vectors in lexicographic order: the token (or request) layouts both engines' exhaustive
// spaces enumerate (case_space.cpp, fuzz/engines/sglang/exhaust_space.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace r3::exhaust {

// Every vector of length `dp`, each entry in 0..cap, summing to `sum`, appended to `out` in
// lexicographic order; `prefix` is scratch (empty on entry and on return).
inline void compositions(int dp, int64_t sum, int64_t cap, std::vector<int64_t>& prefix,
                         std::vector<std::vector<int64_t>>& out) {
  if (static_cast<int>(prefix.size()) == dp - 1) {
    if (sum <= cap) {
      prefix.push_back(sum);
      out.push_back(prefix);
      prefix.pop_back();
    }
    return;
  }
  const int64_t left_slots = dp - 1 - static_cast<int64_t>(prefix.size());
  for (int64_t v = 0; v <= std::min(sum, cap); ++v) {
    if (sum - v > left_slots * cap) continue;
    prefix.push_back(v);
    compositions(dp, sum - v, cap, prefix, out);
    prefix.pop_back();
  }
}

}  // namespace r3::exhaust
