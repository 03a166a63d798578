#include "fuzz/libfuzzer/source_lexer.hpp"

#include <cctype>

namespace r3 {
namespace {

bool ident_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_'; }

// A quoted literal starting at source[i] == quote; returns the index past it, or npos. Line ends
// end it unterminated.
size_t skip_quoted(std::string_view source, size_t i, char quote) {
  for (size_t j = i + 1; j < source.size(); ++j) {
    if (source[j] == '\\') {
      ++j;
      if (j < source.size() && (source[j] == '\n' || source[j] == '\r')) return std::string_view::npos;
      continue;
    }
    if (source[j] == '\n' || source[j] == '\r') return std::string_view::npos;
    if (source[j] == quote) return j + 1;
  }
  return std::string_view::npos;
}

// R"delim( ... )delim" at source[i] == 'R'; the index past it, or npos.
size_t skip_raw(std::string_view source, size_t i) {
  const size_t open = source.find('(', i + 2);
  if (open == std::string_view::npos || open - (i + 2) > 16) return std::string_view::npos;
  const std::string close = ")" + std::string(source.substr(i + 2, open - (i + 2))) + "\"";
  const size_t end = source.find(close, open + 1);
  return end == std::string_view::npos ? end : end + close.size();
}

}  // namespace

std::optional<std::string> cpp_skeleton(std::string_view source) {
  std::string out;
  size_t i = 0;
  while (i < source.size()) {
    const char ch = source[i];
    const bool starts_word = i == 0 || !ident_char(source[i - 1]);
    if (ch == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      size_t j = i + 2;
      while (j < source.size() && !(source[j] == '\n' && source[j - 1] != '\\')) ++j;
      out += 'C';
      i = j;
    } else if (ch == '/' && i + 1 < source.size() && source[i + 1] == '*') {
      const size_t end = source.find("*/", i + 2);
      if (end == std::string_view::npos) return std::nullopt;
      out += 'C';
      i = end + 2;
    } else if (starts_word && (source.substr(i, 2) == "R\"" || source.substr(i, 3) == "LR\"" ||
                               source.substr(i, 3) == "uR\"" || source.substr(i, 3) == "UR\"" ||
                               source.substr(i, 4) == "u8R\"")) {
      const size_t r = source.find('R', i);
      const size_t end = skip_raw(source, r);
      if (end == std::string_view::npos) return std::nullopt;
      out += 'S';
      i = end;
    } else if (ch == '"' || ch == '\'') {
      const size_t end = skip_quoted(source, i, ch);
      if (end == std::string_view::npos) return std::nullopt;
      out += 'S';
      i = end;
    } else {
      out += ch;
      ++i;
    }
  }
  return out;
}

std::optional<std::string> python_skeleton(std::string_view source) {
  std::string out;
  size_t i = 0;
  while (i < source.size()) {
    const char ch = source[i];
    if (ch == '#') {
      while (i < source.size() && source[i] != '\n' && source[i] != '\r') ++i;
      out += 'C';
    } else if (ch == '"' || ch == '\'') {
      const std::string triple(3, ch);
      if (source.substr(i, 3) == triple) {
        size_t j = i + 3;
        for (; j < source.size() && source.substr(j, 3) != triple; ++j)
          if (source[j] == '\\') ++j;
        if (j >= source.size()) return std::nullopt;
        i = j + 3;
      } else {
        const size_t end = skip_quoted(source, i, ch);
        if (end == std::string_view::npos) return std::nullopt;
        i = end;
      }
      out += 'S';
    } else {
      out += ch;
      ++i;
    }
  }
  return out;
}

}  // namespace r3
