#include "fuzz/libfuzzer/trace.hpp"

#include <gtest/gtest.h>

#include <string>

#include "fuzz/codec/trace_binary.hpp"
#include "fuzz/codec/trace_json.hpp"
#include "tests/reference/trace/example_trace.hpp"

namespace r3 {
namespace {

std::span<const uint8_t> bytes_of(const std::string& text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

TEST(TraceTarget, TheExampleRoundTripsAndTheFixedModelsPassIt) {
  const Trace t = test::example_trace();
  EXPECT_EQ(exercise_trace(bytes_of(trace_to_json_text(t))), std::nullopt);
  const std::vector<uint8_t> binary = encode_trace(t);
  EXPECT_EQ(exercise_trace(binary), std::nullopt);
}

TEST(TraceTarget, InputsThatDoNotDecodeAreNoFailure) {
  EXPECT_EQ(exercise_trace(bytes_of("{\"format\": \"r3fuzz-trace/1\"")), std::nullopt);
  EXPECT_EQ(exercise_trace(bytes_of("")), std::nullopt);
  EXPECT_EQ(exercise_trace(bytes_of("T\x01\x02")), std::nullopt);
}

}  // namespace
}  // namespace r3
