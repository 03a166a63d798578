// Production serving logs in Mooncake's public JSONL format (kvcache-ai/Mooncake,
// FAST25-release/traces/; corpus/serving-logs/README.md): one request per line,
//   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
// with one hash id per 512-token block of the prompt, shared leading ids meaning a shared prefix.
// r3fuzz seed --serving-trace reads one and turns it into the requests of a trace: each block
// becomes `tokens_per_block` tokens named by its hash id (so a shared hash id is a shared token
// run, a prefix hit waiting to happen), outputs scale by the same factor, and arrivals follow the
// timestamps' order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reference/error.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

inline constexpr int64_t kMooncakeBlockTokens = 512;

struct ServingRecord {
  int64_t timestamp = 0;  // ms since the first request
  int64_t input_length = 0;
  int64_t output_length = 0;
  std::vector<int64_t> hash_ids;
};

// Every line parsed strictly; errors name the line and the key ("line 3: hash_ids[2]: expected a
// non-negative integer"). Blank lines are skipped; an empty log is an error.
Result<std::vector<ServingRecord>> parse_serving_log(std::string_view text);

struct ServingScale {
  int64_t tokens_per_block = 2;  // a 512-token block becomes this many tokens
  int64_t max_outputs = 6;       // outputs per request at most, after scaling (at least 1)
  int64_t steps_per_second = 1;  // arrival step = floor(timestamp * steps_per_second / 1000)
};

// The requests the log describes, on DP rank 0, each finishing on length: prompt tokens from the
// hash ids (block b's tokens are b * tokens_per_block + i + 1), outputs numbered past every
// prompt token so none looks like a prefix of another.
std::vector<TraceRequest> requests_from_log(const std::vector<ServingRecord>& records, const ServingScale& scale);

}  // namespace r3
