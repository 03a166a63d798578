// A tiny lexer for the source files r3fuzz generates (the C++ regression TEST, pytest files):
// it replaces every comment by "C" and every string or character literal by "S" and keeps the
// rest, the code, byte for byte. Two generated files whose data texts differ must have the same
// skeleton: a text that escaped its comment or literal would show up as code (docs/SECURITY.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace r3 {

// C++: `//` comments (a backslash before the line end continues them), `/* */`, "..." and '...'
// with backslash escapes, raw strings R"delim(...)delim" (with u8, u, U, L prefixes). nullopt when
// a literal or block comment is unterminated, or a "..." literal holds a raw line end.
std::optional<std::string> cpp_skeleton(std::string_view source);

// Python: `#` comments (to \n or \r), '...' and "..." with backslash escapes, and the triple
// quoted forms. nullopt when a literal is unterminated or a one-line literal holds a line end.
std::optional<std::string> python_skeleton(std::string_view source);

}  // namespace r3
