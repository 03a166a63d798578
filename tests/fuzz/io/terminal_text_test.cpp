#include "fuzz/io/terminal_text.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(TerminalText, EscapesControlCharacters) {
  EXPECT_EQ(terminal_safe("red \x1b[31m\a\t\r\n\x7f \\ ok"), "red \\x1b[31m\\x07\\t\\r\\n\\x7f \\ ok");
  EXPECT_EQ(terminal_safe("two\nlines\x1b", true), "two\nlines\\x1b");
  EXPECT_EQ(terminal_safe("plain text, unicode \xc3\xa9"), "plain text, unicode \xc3\xa9");
}

}  // namespace
}  // namespace r3
