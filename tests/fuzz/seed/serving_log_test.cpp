#include "fuzz/seed/serving_log.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

std::string error_of(std::string_view text) {
  const auto r = parse_serving_log(text);
  return r ? "(no error)" : r.error().message;
}

TEST(ServingLog, ReadsMooncakeRecords) {
  const auto r = parse_serving_log(
      "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 52, \"hash_ids\": [0, 1]}\n\n"
      "{\"timestamp\": 3052, \"input_length\": 100, \"output_length\": 5, \"hash_ids\": [0]}\n");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].hash_ids, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ((*r)[1].timestamp, 3052);
  EXPECT_EQ((*r)[1].output_length, 5);
}

TEST(ServingLog, ErrorsNameTheLineAndTheKey) {
  EXPECT_EQ(error_of(""), "the log holds no request");
  EXPECT_EQ(error_of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}"), "line 1: hash_ids: missing");
  EXPECT_EQ(error_of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [-1]}"),
            "line 1: hash_ids[0]: expected a non-negative integer");
  EXPECT_EQ(error_of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1], \"x\": 1}"),
            "line 1: unknown key \"x\" (the keys are timestamp, input_length, output_length, hash_ids)");
  EXPECT_EQ(error_of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n[1]"),
            "line 2: expected a JSON object");
}

TEST(ServingLog, SharedHashIdsBecomeSharedTokenRuns) {
  const std::vector<ServingRecord> records = {{0, 1024, 1024, {7, 8}}, {2500, 600, 10, {7, 9}}};
  const std::vector<TraceRequest> requests = requests_from_log(records, {2, 3, 1});
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].prompt, (std::vector<int32_t>{15, 16, 17, 18}));
  EXPECT_EQ(requests[1].prompt, (std::vector<int32_t>{15, 16, 19, 20}));
  EXPECT_EQ(requests[0].outputs, (std::vector<int32_t>{21, 22, 23}));  // 1024 tokens scale to 4, capped at 3
  EXPECT_EQ(requests[1].outputs, (std::vector<int32_t>{24}));          // 10 tokens scale to 1
  EXPECT_EQ(requests[0].arrival, 0);
  EXPECT_EQ(requests[1].arrival, 2);
  EXPECT_EQ(requests[1].finish, Finish::length);
}

}  // namespace
}  // namespace r3
