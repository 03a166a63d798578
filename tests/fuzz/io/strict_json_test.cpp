#include "fuzz/io/strict_json.hpp"

#include <string>

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(StrictJson, ParsesOrdinaryDocuments) {
  auto doc = parse_json_strictly(R"({"a": [1, {"b": 2, "c": {"b": 3}}], "b": {"a": 1}})");
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ((*doc)["a"][1]["c"]["b"], 3);  // the same key in different objects is fine
}

TEST(StrictJson, RefusesDuplicateKeysWithTheirPosition) {
  EXPECT_EQ(parse_json_strictly(R"({"layer": 5, "layer": 0})").error().message,
            "duplicate key \"layer\" at line 1, column 20");
  EXPECT_EQ(parse_json_strictly("{\"a\": {\n  \"x\": 1,\n  \"x\": 2}}").error().message,
            "duplicate key \"x\" at line 3, column 5");
}

TEST(StrictJson, RefusesNulBytesAnywhere) {
  EXPECT_EQ(parse_json_strictly(std::string("{}\0", 3)).error().message, "NUL byte at line 1, column 3");
  EXPECT_EQ(parse_json_strictly(std::string("{}\0garbage", 10)).error().message, "NUL byte at line 1, column 3");
}

TEST(StrictJson, SyntaxErrorsCarryThePrefix) {
  const std::string message = parse_json_strictly("{} x").error().message;
  EXPECT_TRUE(message.starts_with(kInvalidJson)) << message;
  EXPECT_NE(message.find("line 1, column 4"), std::string::npos) << message;
  EXPECT_TRUE(parse_json_strictly("").error().message.starts_with(kInvalidJson));
}

TEST(StrictJson, RefusesNestingDeeperThanTheLimit) {
  const std::string deep_ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(parse_json_strictly(deep_ok).ok());
  const std::string deep = std::string(30000000, '[') + std::string(30000000, ']');
  EXPECT_EQ(parse_json_strictly(deep).error().message, "nested deeper than 64 levels at line 1, column 65");
}

TEST(StrictJson, RefusesADocumentOverItsParsedBudget) {
  std::string flat = "[";
  for (int i = 0; i < 1000; ++i) flat += "0,";
  flat += "0]";
  EXPECT_TRUE(parse_json_strictly(flat, {kMaxJsonDepth, 1 << 20}).ok());
  const std::string message = parse_json_strictly(flat, {kMaxJsonDepth, 4096}).error().message;
  EXPECT_TRUE(message.starts_with("larger than the budget of 4096 bytes once parsed, at line 1, column ")) << message;
}

}  // namespace
}  // namespace r3
