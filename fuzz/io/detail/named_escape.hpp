// The escapes every text escaper of fuzz/io shares (terminal_text, source_text): the three
// control characters with a name of their own in C, C++, Python and JSON alike.
#pragma once

#include <string_view>

namespace r3::detail {

// "\\n", "\\r" or "\\t" for those three characters; empty for every other.
inline std::string_view named_escape(unsigned code) {
  switch (code) {
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return {};
  }
}

}  // namespace r3::detail
