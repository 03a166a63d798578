#include "fuzz/io/terminal_text.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(TerminalText, EscapesControlCharacters) {
  EXPECT_EQ(terminal_safe("red \x1b[31m\a\t\r\n\x7f \\ ok"), "red \\x1b[31m\\x07\\t\\r\\n\\x7f \\ ok");
  EXPECT_EQ(terminal_safe("two\nlines\x1b", true), "two\nlines\\x1b");
  EXPECT_EQ(terminal_safe("plain text, unicode \xc3\xa9"), "plain text, unicode \xc3\xa9");
}

// U+009B is the 8-bit CSI: "\xc2\x9b" "2J" clears the screen on terminals that take C1 as
// controls. U+0085 (NEL), U+2028 and U+2029 end a line for many viewers.
TEST(TerminalText, EscapesC1ControlsAndUnicodeLineEnds) {
  EXPECT_EQ(terminal_safe("a\xc2\x9b" "2Jb"), "a\\u009b2Jb");
  EXPECT_EQ(terminal_safe("\xc2\x80|\xc2\x85|\xc2\x9f|\xc2\xa0"), "\\u0080|\\u0085|\\u009f|\xc2\xa0");
  EXPECT_EQ(terminal_safe("one\xe2\x80\xa8two\xe2\x80\xa9three"), "one\\u2028two\\u2029three");
  EXPECT_EQ(terminal_safe("x\xc2\x85y", true), "x\\u0085y");  // keep_newlines keeps '\n' only
}

// The bidirectional controls reorder the text after them ("Trojan Source"): a file name holding
// U+202E would print reversed. Each is escaped; the marks U+200E and U+200F, which reorder nothing
// after them, and U+2065 and U+206A, just outside the ranges, print as they are.
TEST(TerminalText, EscapesBidirectionalEmbeddingsOverridesAndIsolates) {
  EXPECT_EQ(terminal_safe("a\xe2\x80\xaa|\xe2\x80\xae|\xe2\x81\xa6|\xe2\x81\xa9" "b"), "a\\u202a|\\u202e|\\u2066|\\u2069b");
  EXPECT_EQ(terminal_safe("\xe2\x80\x8e\xe2\x81\xa5\xe2\x81\xaa"), "\xe2\x80\x8e\xe2\x81\xa5\xe2\x81\xaa");
  const nlohmann::json doc = {{"file", "evil\xe2\x80\xaetxt.json"}};
  EXPECT_EQ(terminal_json(doc, -1), "{\"file\":\"evil\\u202etxt.json\"}");
}

// A byte that is no part of well-formed UTF-8 prints as \xNN: the raw 8-bit CSI 0x9b of a file
// name, a lone lead byte, a truncated sequence, an overlong form, a surrogate.
TEST(TerminalText, EscapesEveryByteThatIsNotUtf8) {
  EXPECT_EQ(terminal_safe("name\x9b" "2J.json"), "name\\x9b2J.json");
  EXPECT_EQ(terminal_safe("\xc3"), "\\xc3");
  EXPECT_EQ(terminal_safe("\xe2\x80"), "\\xe2\\x80");
  EXPECT_EQ(terminal_safe("\xc0\x8a"), "\\xc0\\x8a");          // an overlong '\n'
  EXPECT_EQ(terminal_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // U+D800
  EXPECT_EQ(terminal_safe("\xff\xfe"), "\\xff\\xfe");
}

TEST(TerminalText, KeepsOrdinaryUtf8) {
  const std::string text = "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad \xef\xbf\xbd \xef\xbf\xbf";
  EXPECT_EQ(terminal_safe(text), text);
}

TEST(TerminalText, JsonEscapesC1LineEndsAndDelAndReplacesInvalidUtf8) {
  const nlohmann::json doc = {{"note", "a\xc2\x9b" "2J\x1b\x7f\xe2\x80\xa8\n\xc2\xa0\x9b"}};
  EXPECT_EQ(terminal_json(doc, -1), "{\"note\":\"a\\u009b2J\\u001b\\u007f\\u2028\\n\xc2\xa0\xef\xbf\xbd\"}");
  // It parses back to the same text (invalid bytes aside): escapes, not deletions.
  EXPECT_EQ(nlohmann::json::parse(terminal_json(nlohmann::json{{"k", "\xc2\x85|\xe2\x80\xa9"}}))["k"], "\xc2\x85|\xe2\x80\xa9");
  nlohmann::ordered_json keys;
  keys["\xc2\x9b"] = 1;
  EXPECT_EQ(terminal_json(keys, -1), "{\"\\u009b\":1}");
}

}  // namespace
}  // namespace r3
