#include "fuzz/seed/traffic.hpp"

#include "fuzz/seed/int_list.hpp"

namespace r3 {

Result<DeclaredTraffic> read_declared_traffic(const nlohmann::json& t, const std::string& decode_key, int64_t lowest) {
  if (!t.is_object()) return Error{"traffic: expected an object with " + decode_key + " and/or prefill_lengths"};
  DeclaredTraffic out;
  for (const auto& item : t.items()) {
    if (item.key() == decode_key) {
      R3_TRY(auto range, int_list(item.value(), "traffic." + decode_key, 2, "(expected [lo, hi])"));
      if (range.size() != 2 || range[0] < lowest || range[0] > range[1]) {
        return Error{"traffic." + decode_key + ": expected [lo, hi] with " + std::to_string(lowest) + " <= lo <= hi"};
      }
      out.decode = std::pair{range[0], range[1]};
    } else if (item.key() == "prefill_lengths") {
      R3_TRY(out.prefill_lengths,
             int_list(item.value(), "traffic.prefill_lengths", kMaxPrefillLengths, kPrefillLengthsWhy));
    } else {
      return Error{"traffic: unknown key \"" + item.key() + "\" (allowed: " + decode_key + ", prefill_lengths)"};
    }
  }
  if (!out.decode && out.prefill_lengths.empty()) return Error{"traffic: needs " + decode_key + " or prefill_lengths"};
  return out;
}

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
