// Text from files (a case's note, an implementation name from "expect", a file name) printed to a
// terminal: control characters, escape sequences included, would let a file rewrite what the user
// sees, and a line end would let it print a line of its own ("FAKE LINE: all good"). This is the
// one terminal escape of r3fuzz (docs/SECURITY.md, "One terminal escape"): every printer and
// main()'s error line use it.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace r3 {

// `text` with everything a terminal acts on rather than shows written as visible escapes:
//   - C0 controls (below 0x20) and DEL as \n, \r, \t or \xNN (ESC is \x1b);
//   - C1 controls U+0080..U+009F (U+009B is the 8-bit CSI, U+0085 the NEL line end) and the
//     Unicode line ends U+2028 and U+2029 as \u009b, \u0085, \u2028;
//   - every byte that is not part of well-formed UTF-8 (a raw 0x9b, which some terminals take
//     as CSI, a lone continuation byte, a surrogate) as \xNN, one escape per byte.
// Valid UTF-8 otherwise passes as is. Backslashes stay as they are: messages already quote text
// with JSON-style escapes, and a backslash moves no cursor.
// keep_newlines lets '\n' through, and is only for documents r3fuzz composes whose data is
// already escaped inside them (a case's JSON text, a generated TEST, a table): never for a
// message, which may quote data anywhere (main() prints errors with keep_newlines off).
std::string terminal_safe(std::string_view text, bool keep_newlines = false);

// A JSON document as printed by --json: dump(indent) with invalid UTF-8 replaced by U+FFFD
// rather than thrown on, and every character terminal_safe escapes written as a JSON escape
// (the control characters below 0x20 by dump itself; DEL as \u007f; C1 and U+2028/U+2029 as
// \u0085 and so on), so no byte from data moves the cursor or ends a line, and the text parses
// back to the same document.
std::string terminal_json(const nlohmann::json& doc, int indent = 2);
std::string terminal_json(const nlohmann::ordered_json& doc, int indent = 2);

}  // namespace r3
