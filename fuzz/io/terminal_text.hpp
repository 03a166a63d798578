// Text from files (a case's note, an implementation name from "expect") printed to a terminal:
// control characters, escape sequences included, would let a file rewrite what the user sees.
#pragma once

#include <string>
#include <string_view>

namespace r3 {

// `text` with every control character (below 0x20, and 0x7f) written as \n, \r, \t or \xNN.
// Backslashes stay as they are: messages already quote text with JSON-style escapes, and a
// backslash moves no cursor. With keep_newlines, '\n' passes through (for multi-line messages
// r3fuzz composes itself).
std::string terminal_safe(std::string_view text, bool keep_newlines = false);

}  // namespace r3
