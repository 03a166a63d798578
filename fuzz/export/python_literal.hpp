// The one escape for every data text (a case's note, file and implementation names, the engine
// spec) that an exported Python file embeds: a text from a case file must stay a string literal,
// whatever it holds, and never become code. (fuzz/io/source_text on another branch does the same
// for other languages; the two are meant to meet in one place.)
#pragma once

#include <string>
#include <string_view>

namespace r3 {

// `text` (UTF-8) as a double-quoted Python 3 str literal in pure ASCII: printable ASCII stays as
// it is except \ and ", which are escaped; \n \r \t by name; other control characters and every
// non-ASCII code point as \xNN, \uNNNN or \UNNNNNNNN. A byte that is not valid UTF-8 (case files
// are parsed as JSON, which rejects it; this is for other callers) becomes U+FFFD.
std::string python_string_literal(std::string_view text);

}  // namespace r3
