#include "fuzz/codec/case_json.hpp"

#include "fuzz/codec/base_codec.hpp"
#include "fuzz/codec/engine_codec.hpp"
#include "fuzz/codec/json_fields.hpp"
#include "fuzz/io/input_file.hpp"
#include "fuzz/io/new_file.hpp"
#include "fuzz/io/strict_json.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// ---- reading -------------------------------------------------------------------------

// "engine" decides which fields a case has; absent, it is the default engine and every older
// file keeps its meaning.
Result<Engine> read_engine(const json& doc) {
  if (!doc.is_object()) return Engine{};  // the engine's reader names the mistake
  auto it = doc.find("engine");
  if (it == doc.end()) return Engine{};
  R3_TRY(std::string text, json_fields::read_string(*it, "engine"));
  return parse_engine(text);
}

Result<Case> read_case(const json& doc) {
  R3_TRY(Engine engine, read_engine(doc));
  const EngineCodec* codec = engine_codec(engine);
  if (!codec) return Error{"engine: " + std::string(engine.name()) + " has no case codec, so its cases cannot be read"};
  R3_TRY(Case c, codec->read_json(doc));
  c.engine = engine;
  R3_TRY_STATUS(validate(c));
  return c;
}

// ---- writing -------------------------------------------------------------------------

// The engine's document; an engine without a codec writes its base fields and its name.
ordered_json build(const Case& c) {
  const EngineCodec* codec = engine_codec(c.engine);
  return codec ? codec->to_json(c) : base_case_json(c);
}

// Invalid UTF-8 in a note becomes U+FFFD instead of an exception.
std::string dump_scalar(const ordered_json& v) { return v.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

bool is_scalar_list(const ordered_json& v) {
  if (!v.is_array()) return false;
  for (const auto& e : v)
    if (e.is_structured()) return false;
  return true;
}

// Scalars, scalar lists and objects of those fit on one line.
bool fits_one_line(const ordered_json& v) {
  if (v.is_primitive() || is_scalar_list(v)) return true;
  if (!v.is_object()) return false;
  for (const auto& item : v.items())
    if (!(item.value().is_primitive() || is_scalar_list(item.value()))) return false;
  return true;
}

void print_inline(const ordered_json& v, std::string& out) {
  if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ", ";
      print_inline(v[i], out);
    }
    out += ']';
  } else if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& item : v.items()) {
      if (!first) out += ", ";
      first = false;
      out += dump_scalar(ordered_json(item.key())) + ": ";
      print_inline(item.value(), out);
    }
    out += '}';
  } else {
    out += dump_scalar(v);
  }
}

void print_pretty(const ordered_json& v, int indent, bool top, std::string& out) {
  if (!top && fits_one_line(v)) return print_inline(v, out);
  const std::string pad(static_cast<size_t>(indent) + 2, ' ');
  const bool object = v.is_object();
  out += object ? "{\n" : "[\n";
  size_t i = 0;
  for (const auto& item : v.items()) {
    out += pad;
    if (object) out += dump_scalar(ordered_json(item.key())) + ": ";
    print_pretty(item.value(), indent + 2, false, out);
    out += ++i < v.size() ? ",\n" : "\n";
  }
  out += std::string(static_cast<size_t>(indent), ' ') + (object ? "}" : "]");
}

}  // namespace

Result<Case> case_from_json(const nlohmann::json& doc) {
  try {
    return read_case(doc);
  } catch (const std::exception& e) {  // defensive: every access above is type-checked first
    return Error{std::string("case: cannot read JSON: ") + e.what()};
  }
}

Result<Case> case_from_json_text(std::string_view text) {
  R3_TRY(json doc, parse_json_strictly(text));
  return case_from_json(doc);
}

nlohmann::json case_to_json(const Case& c) { return nlohmann::json(build(c)); }

std::string case_to_json_text(const Case& c) {
  std::string out;
  print_pretty(build(c), 0, true, out);
  out += '\n';
  return out;
}

Result<Case> read_case_file(const std::string& path) {
  R3_TRY(std::string text, read_input_file(path));
  auto c = case_from_json_text(text);
  if (!c) return Error{path + ": " + c.error().message};
  return c;
}

Status write_case_file(const std::string& path, const Case& c) {
  return write_new_file(path, case_to_json_text(c));  // a new file, renamed over the name
}

}  // namespace r3
