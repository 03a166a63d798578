#include "fuzz/io/terminal_text.hpp"

#include <cstdint>
#include <cstdio>

#include "fuzz/io/detail/named_escape.hpp"
#include "fuzz/io/utf8.hpp"

namespace r3 {
namespace {

// C1 controls, the Unicode line and paragraph separators, and the bidirectional embeddings,
// overrides and isolates (U+202A to U+202E, U+2066 to U+2069): valid UTF-8 that a terminal (or a
// log viewer splitting lines) acts on, the last ones by reordering what follows them (a file name
// that reads as another, CVE-2021-42574's "Trojan Source"). Written as \uXXXX, the same text in
// both escapes.
bool is_unicode_control(int32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

void append_u_escape(std::string& out, int32_t cp) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  out += buf;
}

void append_x_escape(std::string& out, unsigned char byte) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", byte);
  out += buf;
}

}  // namespace

std::string terminal_safe(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    const int32_t cp = next_code_point(text, i);
    const auto byte = static_cast<unsigned char>(text[at]);
    if (cp < 0) {
      append_x_escape(out, byte);  // not UTF-8: a raw 0x9b included
    } else if (cp == '\n' && keep_newlines) {
      out += '\n';
    } else if (const std::string_view named = detail::named_escape(static_cast<unsigned>(cp)); !named.empty()) {
      out += named;
    } else if (cp < 0x20 || cp == 0x7f) {
      append_x_escape(out, byte);
    } else if (is_unicode_control(cp)) {
      append_u_escape(out, cp);
    } else {
      out.append(text.substr(at, i - at));
    }
  }
  return out;
}

namespace {

template <class Json>
std::string dump_for_terminal(const Json& doc, int indent) {
  // replace: the dump is valid UTF-8 whatever the strings held, so every code point decodes.
  const std::string text = doc.dump(indent, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  // Only inside strings: JSON syntax outside them is ASCII without DEL, so each escape stays
  // inside the string it came from.
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    const int32_t cp = next_code_point(text, i);
    if (cp == 0x7f || is_unicode_control(cp)) append_u_escape(out, cp);
    else out.append(text.substr(at, i - at));
  }
  return out;
}

}  // namespace

std::string terminal_json(const nlohmann::json& doc, int indent) { return dump_for_terminal(doc, indent); }
std::string terminal_json(const nlohmann::ordered_json& doc, int indent) { return dump_for_terminal(doc, indent); }

}  // namespace r3
