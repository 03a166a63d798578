// What every engine's deployment traffic shares (fuzz/engines/NAME/deployment.cpp): which decode
// steps it seeds, how their requests spread over the DP ranks, and how many cases one deployment
// may seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/error.hpp"

namespace r3 {

// The most cases one deployment's traffic seeds, duplicates included (docs/SECURITY.md, "Memory
// budgets"). A decode range seeds at most 2 + 3 * limits::kMaxCudagraphSizes steps (its ends, and
// each bucket with its neighbours), and each prefill length two, or four for an SGLang deployment
// with decode graphs. Counted when the deployment is read, before any case is made, so that a
// small file cannot ask for gigabytes of cases: 16,384 cases of 1,024 ranks are about 80 MB of JSON.
inline constexpr int64_t kMaxTrafficCases = 16384;

// Each prefill length seeds at least two cases: a longer list is over kMaxTrafficCases whatever
// else the deployment holds, and is refused before it is copied.
inline constexpr size_t kMaxPrefillLengths = kMaxTrafficCases / 2;
inline constexpr const char* kPrefillLengthsWhy = "(each seeds two cases or more; a deployment seeds at most 16384)";

// A deployment's "traffic" object: a decode range [lo, hi] under the engine's own key (what it
// counts: decode_batches, decode_requests) and prefill lengths, at least one of the two.
struct DeclaredTraffic {
  std::optional<std::pair<int64_t, int64_t>> decode;
  std::vector<int64_t> prefill_lengths;
};
// Errors name the key; the range's lo is at least `lowest`, and the lengths are bounded
// (kMaxPrefillLengths).
Result<DeclaredTraffic> read_declared_traffic(const nlohmann::json& t, const std::string& decode_key, int64_t lowest);

// The busiest rank's counts a decode range [lo, hi] seeds: its ends, and every bucket (capture
// size) in range with its neighbours (+-1), which straddle the buckets.
std::set<int64_t> decode_targets(std::pair<int64_t, int64_t> range, const std::vector<int64_t>& buckets);

// Rank 0 holds `most` requests; the others fewer, spread deterministically (some idle).
std::vector<int64_t> spread_over_ranks(int dp, int64_t most);

// How many cases a deployment's traffic seeds, duplicates included, counted without making them.
struct TrafficSize {
  int64_t decode = 0;   // decode (or verify) steps
  int64_t prefill = 0;  // prefill (extend) steps
  int64_t total() const { return decode + prefill; }
};

// Ok when the size is at most kMaxTrafficCases; else an error with both counts and the bound.
Status check_traffic_size(TrafficSize size);

}  // namespace r3
