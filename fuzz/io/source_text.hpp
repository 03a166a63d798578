// Text from data (a note, an adapter's branch or error, an implementation name) placed into a
// generated source file: the ready-to-paste GoogleTest TEST (fuzz/shrink/regression_artifacts)
// and the pytest files. Each function makes the text inert in one lexical context, so no data
// can end a comment or a string literal early and become code (docs/SECURITY.md). Every
// generator of source text uses these and nothing else.
#pragma once

#include <string>
#include <string_view>

namespace r3 {

// A C++ string literal, quotes included, whose value is exactly `text`'s bytes: '"' and '\'
// are escaped, \n \r \t written as such, and every other byte below 0x20 or from 0x7f up as a
// three-digit octal escape (\033), so the literal is one line of ASCII and an escape never
// runs into the next character (as \x would).
std::string cpp_string_literal(std::string_view text);

// One C++ `//` comment line, "// " and the text, without the line end. Control bytes (line
// ends included), backslashes (a trailing one would splice the next line into the comment) and
// bytes from 0x7f up are written as \xNN, so the comment ends where the line does.
std::string cpp_line_comment(std::string_view text);

// A Python string literal, double quotes included, whose value is `text` decoded as UTF-8:
// '"' and '\' escaped, \n \r \t as such, other control characters as \xNN, non-ASCII
// characters as \uXXXX or \UXXXXXXXX. A byte that is not valid UTF-8 becomes \xNN (the code
// point U+00NN): the literal is always valid, one line of ASCII.
std::string python_string_literal(std::string_view text);

// One Python `#` comment line, "# " and the text, without the line end, escaped as
// cpp_line_comment() does (a Python comment ends at \n, \r or \f: all are escaped).
std::string python_comment(std::string_view text);

}  // namespace r3
