// The one escape of every data text an exported Python file embeds: a case's note can hold
// anything, and must stay a str literal.
#include "fuzz/export/python_literal.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(PythonStringLiteral, PlainTextStaysAsItIs) {
  EXPECT_EQ(python_string_literal("dp 2 tp 1, tokens [2, 2]"), "\"dp 2 tp 1, tokens [2, 2]\"");
  EXPECT_EQ(python_string_literal(""), "\"\"");
}

TEST(PythonStringLiteral, QuotesBackslashesAndControlsAreEscaped) {
  EXPECT_EQ(python_string_literal("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(python_string_literal("x\n\"\"\"\nimport os"), "\"x\\n\\\"\\\"\\\"\\nimport os\"");
  EXPECT_EQ(python_string_literal(std::string("\r\t\x1b[31m\x7f\0", 9)), "\"\\r\\t\\x1b[31m\\x7f\\x00\"");
}

TEST(PythonStringLiteral, NonAsciiBecomesCodePointEscapes) {
  EXPECT_EQ(python_string_literal("caf\xc3\xa9 \xe2\x80\xae \xf0\x9f\x98\x80"), "\"caf\\xe9 \\u202e \\U0001f600\"");
}

TEST(PythonStringLiteral, InvalidUtf8BecomesTheReplacementCharacter) {
  EXPECT_EQ(python_string_literal("a\xff" "b\xc3"), "\"a\\ufffdb\\ufffd\"");
  EXPECT_EQ(python_string_literal("\xc0\xaf"), "\"\\ufffd\\ufffd\"");          // overlong '/'
  EXPECT_EQ(python_string_literal("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
}

}  // namespace
}  // namespace r3
