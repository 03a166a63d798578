#include "fuzz/io/source_text.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(SourceText, CppStringLiteralEscapesQuotesBackslashesAndEveryControlOrHighByte) {
  EXPECT_EQ(cpp_string_literal("plain"), "\"plain\"");
  EXPECT_EQ(cpp_string_literal("a\"b\\c\nd\re\tf"), R"("a\"b\\c\nd\re\tf")");
  EXPECT_EQ(cpp_string_literal(std::string("\x1b[2J\0" "1\x7f\xc3\xa9", 9)), R"("\033[2J\0001\177\303\251")");
}

TEST(SourceText, CppLineCommentCannotEndItsLineOrSpliceTheNext) {
  EXPECT_EQ(cpp_line_comment("Regression: a/b"), "// Regression: a/b");
  EXPECT_EQ(cpp_line_comment("x\nint injected = system(\"touch /tmp/INJ\");\n//"),
            R"(// x\x0aint injected = system("touch /tmp/INJ");\x0a//)");
  EXPECT_EQ(cpp_line_comment("ends with \\"), R"(// ends with \x5c)");
  EXPECT_EQ(cpp_line_comment("\r\xe2\x80\xa8"), R"(// \x0d\xe2\x80\xa8)");
}

TEST(SourceText, PythonStringLiteralKeepsUnicodeAsEscapesAndBadBytesAsHex) {
  EXPECT_EQ(python_string_literal("a\"b\\c\nd"), R"("a\"b\\c\nd")");
  EXPECT_EQ(python_string_literal("\x1b\x7f"), R"("\x1b\x7f")");
  EXPECT_EQ(python_string_literal("caf\xc3\xa9 \xf0\x9f\x98\x80"), R"("caf\u00e9 \U0001f600")");
  EXPECT_EQ(python_string_literal("\xff\xc3"), R"("\xff\xc3")");  // not UTF-8: one \xNN per byte
  EXPECT_EQ(python_string_literal("\xed\xa0\x80"), R"("\xed\xa0\x80")");  // a surrogate is not a character
}

TEST(SourceText, PythonCommentEscapesEveryLineEnd) {
  EXPECT_EQ(python_comment("a\nb\rc\fd"), R"(# a\x0ab\x0dc\x0cd)");
}

}  // namespace
}  // namespace r3
