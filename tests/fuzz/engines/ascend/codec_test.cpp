// vllm-ascend's case codec (fuzz/engines/ascend/codec.cpp): the base document without path and
// monolithic, an "ascend" object after "layer"; binary version 5; each error names the key.
#include <gtest/gtest.h>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "tests/support/ascend_fixtures.hpp"

namespace r3 {
namespace {

Case example() {
  Case c = test::ascend_case(2, 2, true, true, {3, 4}, ascend::Chip::a2, ascend::Runner::mrv2);
  c.padding = {PaddingMode::cudagraph, {4, 8}};
  ascend::Fields& f = *ascend::fields_of(c);
  f.comm = ascend::Comm::mc2;
  f.graph = ascend::Graph::full_decode_only;
  f.lora = true;
  f.mc2_tokens = 12;
  return c;
}

TEST(AscendCodec, JsonReadsAsTheIssueWritesIt) {
  EXPECT_EQ(case_to_json_text(example()),
            R"({
  "format": "r3fuzz-case/1",
  "engine": "ascend",
  "topology": {"dp": 2, "tp": 2, "ep": true, "sp": true},
  "model": {"layers": 2, "top_k": 2, "experts": 64},
  "max_num_tokens": 16,
  "tokens": [3, 4],
  "padding": {"cudagraph": [4, 8]},
  "idle_dummy": true,
  "layer": 0,
  "ascend": {"chip": "a2", "comm": "mc2", "runner": "mrv2", "graph": "full_decode_only", "lora": true, "mc2_tokens": 12}
}
)");
}

TEST(AscendCodec, JsonAndBinaryRoundTrip) {
  for (const Case& c : {example(), test::ascend_case(1, 1, false, false, {1})}) {
    Result<Case> back = case_from_json_text(case_to_json_text(c));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, c);
    const std::vector<uint8_t> bytes = case_to_binary(c);
    ASSERT_FALSE(bytes.empty());
    EXPECT_EQ(bytes[0], 5);
    Result<Case> decoded = case_from_binary(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(*decoded, c);
  }
}

std::string error_of(const std::string& text) {
  const Result<Case> c = case_from_json_text(text);
  return c.ok() ? "ok" : c.error().message;
}

TEST(AscendCodec, BadKeysAreNamed) {
  std::string text = case_to_json_text(example());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_EQ(error_of(with("\"chip\": \"a2\"", "\"chip\": \"a4\"")), "ascend.chip: \"a4\" is not one of a2, a3, a5, 310p");
  EXPECT_EQ(error_of(with("\"lora\": true", "\"lora\": 1")), "ascend.lora: expected true or false, got number");
  EXPECT_EQ(error_of(with("\"lora\": true", "\"loras\": true")).substr(0, 8), "ascend: ");
  EXPECT_EQ(error_of(with("\"layer\": 0,", "\"layer\": 0, \"path\": \"single\",")),
            "path: not a key of an ascend case (its comm type places the rows)");
  EXPECT_EQ(error_of(with("\"ascend\": {", "\"ascent\": {")).substr(0, 7), "ascend:");
  EXPECT_EQ(error_of(with("\"mc2_tokens\": 12", "\"mc2_tokens\": -3")), "ascend.mc2_tokens: -3 is outside [0, 1048576] (0: derived)");
}

}  // namespace
}  // namespace r3
