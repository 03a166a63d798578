#include "fuzz/io/utf8.hpp"

namespace r3 {

int32_t next_code_point(std::string_view text, size_t& i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  const int length = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xe ? 3 : (b0 >> 3) == 0x1e ? 4 : 0;
  if (length == 0 || i + static_cast<size_t>(length) > text.size()) {
    ++i;
    return -1;
  }
  int32_t cp = length == 1 ? b0 : b0 & (0x7f >> length);
  for (int k = 1; k < length; ++k) {
    const auto b = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
    if ((b >> 6) != 0x2) {
      ++i;
      return -1;
    }
    cp = (cp << 6) | (b & 0x3f);
  }
  static constexpr int32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[length] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {  // overlong or not a scalar
    ++i;
    return -1;
  }
  i += static_cast<size_t>(length);
  return cp;
}

}  // namespace r3
