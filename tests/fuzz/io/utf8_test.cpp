#include "fuzz/io/utf8.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace r3 {
namespace {

std::vector<int32_t> decode(std::string_view text) {
  std::vector<int32_t> out;
  for (size_t i = 0; i < text.size();) out.push_back(next_code_point(text, i));
  return out;
}

TEST(Utf8, DecodesWellFormedSequences) {
  EXPECT_EQ(decode("a\xc2\x9b\xe2\x80\xa8\xef\xbf\xbf\xf0\x9f\x98\x80"),
            (std::vector<int32_t>{'a', 0x9b, 0x2028, 0xffff, 0x1f600}));
}

// Each byte of a sequence that is not well-formed is one -1: the escapers escape it alone.
TEST(Utf8, GivesMinusOnePerStrayByte) {
  EXPECT_EQ(decode("\x9b"), (std::vector<int32_t>{-1}));
  EXPECT_EQ(decode("\xc3" "a"), (std::vector<int32_t>{-1, 'a'}));
  EXPECT_EQ(decode("\xc0\x8a"), (std::vector<int32_t>{-1, -1}));              // overlong
  EXPECT_EQ(decode("\xed\xa0\x80"), (std::vector<int32_t>{-1, -1, -1}));      // a surrogate
  EXPECT_EQ(decode("\xf4\x90\x80\x80"), (std::vector<int32_t>{-1, -1, -1, -1}));  // above U+10FFFF
  EXPECT_EQ(decode("\xe2\x80"), (std::vector<int32_t>{-1, -1}));              // truncated
}

}  // namespace
}  // namespace r3
