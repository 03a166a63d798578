#include "fuzz/io/terminal_text.hpp"

#include <cstdio>

#include "fuzz/io/detail/named_escape.hpp"

namespace r3 {

std::string terminal_safe(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '\n' && keep_newlines) {
      out += ch;
    } else if (const std::string_view named = detail::named_escape(u); !named.empty()) {
      out += named;
    } else if (u < 0x20 || u == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += ch;
    }
  }
  return out;
}

namespace {

template <class Json>
std::string dump_for_terminal(const Json& doc, int indent) {
  std::string text = doc.dump(indent, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (ch == '\x7f') out += "\\u007f";  // only inside strings: JSON syntax never holds DEL
    else out += ch;
  }
  return out;
}

}  // namespace

std::string terminal_json(const nlohmann::json& doc, int indent) { return dump_for_terminal(doc, indent); }
std::string terminal_json(const nlohmann::ordered_json& doc, int indent) { return dump_for_terminal(doc, indent); }

}  // namespace r3
