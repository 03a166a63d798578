#include "fuzz/seed/traffic.hpp"

namespace r3 {

std::set<int64_t> decode_targets(std::pair<int64_t, int64_t> range, const std::vector<int64_t>& buckets) {
  const auto [lo, hi] = range;
  std::set<int64_t> targets = {lo, hi};
  for (int64_t b : buckets)
    for (int64_t t : {b - 1, b, b + 1})
      if (t >= lo && t <= hi) targets.insert(t);
  return targets;
}

std::vector<int64_t> spread_over_ranks(int dp, int64_t most) {
  std::vector<int64_t> v(static_cast<size_t>(dp));
  for (int r = 0; r < dp; ++r) v[static_cast<size_t>(r)] = r == 0 ? most : (most * ((r * 5) % 8)) / 8;
  return v;
}

Status check_traffic_size(TrafficSize size) {
  if (size.total() <= kMaxTrafficCases) return ok_status();
  return Error{"traffic: seeds " + std::to_string(size.total()) + " cases (" + std::to_string(size.decode) +
               " decode and " + std::to_string(size.prefill) + " prefill steps), at most " +
               std::to_string(kMaxTrafficCases) + " (fewer prefill_lengths, or a narrower decode range)"};
}

}  // namespace r3
