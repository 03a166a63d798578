// The trtllm engine's case codec (fuzz/engines/trtllm/codec.cpp): a per-step case reads and writes
// as the base JSON document with "engine": "trtllm", and as binary version 4.
#include <gtest/gtest.h>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "reference/engines/trtllm/model.hpp"

namespace r3 {
namespace {

Case decode_step() {
  Case c;
  c.engine = trtllm::engine();
  c.topology = {1, 2, false, false};
  c.model = {2, 2, 8};
  c.max_num_tokens = 8;
  c.tokens = {3};
  c.padding = {PaddingMode::cudagraph, {1, 4}};
  return c;
}

TEST(TrtllmCodec, JsonAndBinaryRoundTrip) {
  const Case c = decode_step();
  const std::string text = case_to_json_text(c);
  EXPECT_NE(text.find("\"engine\": \"trtllm\""), std::string::npos) << text;
  Result<Case> back = case_from_json_text(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, c);
  const std::vector<uint8_t> bytes = case_to_binary(c);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes[0], 4);
  Result<Case> decoded = case_from_binary(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, c);
}

}  // namespace
}  // namespace r3
