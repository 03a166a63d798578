#include "fuzz/io/source_text.hpp"

#include <cstdint>
#include <cstdio>

#include "fuzz/io/detail/named_escape.hpp"
#include "fuzz/io/utf8.hpp"

namespace r3 {
namespace {

std::string hex_escape(unsigned char byte) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", byte);
  return buf;
}

// Printable ASCII but the backslash passes; everything else is \xNN. Shared by both comments.
std::string comment_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u >= 0x7f || ch == '\\') out += hex_escape(u);
    else out += ch;
  }
  return out;
}

}  // namespace

std::string cpp_string_literal(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (const std::string_view named = detail::named_escape(u); !named.empty()) {
      out += named;
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\%03o", u);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string cpp_line_comment(std::string_view text) { return "// " + comment_text(text); }

std::string python_string_literal(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    const int32_t cp = next_code_point(text, i);
    if (cp < 0) {
      out += hex_escape(static_cast<unsigned char>(text[at]));
    } else if (cp == '"' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (const std::string_view named = detail::named_escape(static_cast<unsigned>(cp)); !named.empty()) {
      out += named;
    } else if (cp < 0x20 || cp == 0x7f) {
      out += hex_escape(static_cast<unsigned char>(cp));
    } else if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else {
      char buf[11];
      if (cp <= 0xffff) std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      else std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(cp));
      out += buf;
    }
  }
  return out + "\"";
}

std::string python_comment(std::string_view text) { return "# " + comment_text(text); }

}  // namespace r3
