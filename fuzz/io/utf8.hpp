// Decoding UTF-8 that r3fuzz did not write (notes, file names, adapter texts): one decoder for
// every escaper (terminal_text, source_text, the JUnit XML filter), so all of them agree on which
// bytes form a character and which are stray bytes to escape one by one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace r3 {

// The code point of the well-formed UTF-8 sequence at text[i], advancing i past it; -1 for a
// byte that starts none (a stray continuation byte, a truncated or overlong sequence, a
// surrogate, above U+10FFFF), advancing i by that one byte. i < text.size().
int32_t next_code_point(std::string_view text, size_t& i);

}  // namespace r3
