// Text from files (a case's note, an implementation name from "expect") printed to a terminal:
// control characters, escape sequences included, would let a file rewrite what the user sees.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace r3 {

// `text` with every control character (below 0x20, and 0x7f) written as \n, \r, \t or \xNN.
// Backslashes stay as they are: messages already quote text with JSON-style escapes, and a
// backslash moves no cursor. With keep_newlines, '\n' passes through (for multi-line messages
// r3fuzz composes itself).
std::string terminal_safe(std::string_view text, bool keep_newlines = false);

// A JSON document as printed by --json: dump(indent) with control characters escaped (JSON
// escapes those below 0x20; DEL is written as \u007f too) and invalid UTF-8 replaced by
// U+FFFD rather than thrown on, so no byte from data moves the cursor.
std::string terminal_json(const nlohmann::json& doc, int indent = 2);
std::string terminal_json(const nlohmann::ordered_json& doc, int indent = 2);

}  // namespace r3
