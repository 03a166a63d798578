#include "fuzz/codec/json_fields.hpp"

#include <climits>

#include "reference/limits.hpp"

namespace r3::json_fields {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

std::string child(const std::string& where, std::string_view key) {
  return where.empty() ? std::string(key) : where + "." + std::string(key);
}

std::string element(const std::string& where, size_t i) { return where + "[" + std::to_string(i) + "]"; }

}  // namespace

std::string kind_of(const json& v) {
  if (v.is_number_float()) return "number " + v.dump();
  return v.type_name();
}

// ---- reading -------------------------------------------------------------------------

Result<ObjectReader> ObjectReader::open(const json& v, std::string where, std::initializer_list<std::string_view> allowed) {
  const std::string name = where.empty() ? "case" : where;
  if (!v.is_object()) return Error{name + ": expected an object, got " + kind_of(v)};
  for (const auto& item : v.items()) {
    bool known = false;
    for (std::string_view key : allowed) known = known || item.key() == key;
    if (known) continue;
    std::string list;
    for (std::string_view key : allowed) list += (list.empty() ? "" : ", ") + std::string(key);
    return Error{name + ": unknown key \"" + item.key() + "\" (allowed: " + list + ")"};
  }
  return ObjectReader(v, std::move(where));
}

const json* ObjectReader::find(std::string_view key) const {
  auto it = object_->find(std::string(key));
  return it == object_->end() ? nullptr : &*it;
}

Result<const json*> ObjectReader::require(std::string_view key) const {
  if (const json* v = find(key)) return v;
  return Error{path(key) + ": required key is missing"};
}

std::string ObjectReader::path(std::string_view key) const { return child(where_, key); }

Result<int64_t> read_int64(const json& v, const std::string& name) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return Error{name + ": " + v.dump() + " is out of range for a 64-bit integer"};
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return Error{name + ": expected an integer, got " + kind_of(v)};
}

Result<int> read_int(const json& v, const std::string& name) {
  R3_TRY(int64_t value, read_int64(v, name));
  if (value < INT_MIN || value > INT_MAX) return Error{name + ": " + std::to_string(value) + " is out of range for a 32-bit integer"};
  return static_cast<int>(value);
}

Result<bool> read_bool(const json& v, const std::string& name) {
  if (!v.is_boolean()) return Error{name + ": expected true or false, got " + kind_of(v)};
  return v.get<bool>();
}

Result<std::string> read_string(const json& v, const std::string& name) {
  if (!v.is_string()) return Error{name + ": expected a string, got " + kind_of(v)};
  return v.get<std::string>();
}

Result<std::vector<int64_t>> read_int_list(const json& v, const std::string& name) {
  if (!v.is_array()) return Error{name + ": expected a list of integers, got " + kind_of(v)};
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    R3_TRY(int64_t value, read_int64(v[i], element(name, i)));
    out.push_back(value);
  }
  return out;
}

Status check_format(const ObjectReader& o) {
  R3_TRY(const json* format, o.require("format"));
  R3_TRY(std::string format_text, read_string(*format, "format"));
  if (format_text != kCaseFormat) {
    return Error{"format: \"" + format_text + "\" is not supported (expected \"" + std::string(kCaseFormat) + "\")"};
  }
  return ok_status();
}

Status check_text_size(const std::string& text, std::string_view field) {
  if (static_cast<int64_t>(text.size()) <= limits::kMaxTextBytes) return ok_status();
  return Error{std::string(field) + ": " + std::to_string(text.size()) + " bytes, at most " +
               std::to_string(limits::kMaxTextBytes) + " (1 MiB, the binary case format's limit)"};
}

Result<ModelShape> read_model(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "model", {"layers", "top_k", "experts"}));
  ModelShape m;
  R3_TRY(const json* layers, o.require("layers"));
  R3_TRY(m.layers, read_int(*layers, o.path("layers")));
  R3_TRY(const json* top_k, o.require("top_k"));
  R3_TRY(m.top_k, read_int(*top_k, o.path("top_k")));
  R3_TRY(const json* experts, o.require("experts"));
  R3_TRY(m.experts, read_int(*experts, o.path("experts")));
  return m;
}

Result<Expectation> read_expect(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "expect", {"impl", "verdict", "severity"}));
  Expectation e;
  R3_TRY(const json* impl, o.require("impl"));
  R3_TRY(e.impl, read_string(*impl, o.path("impl")));
  if (e.impl.empty()) return Error{"expect.impl: must name an implementation, got an empty string"};
  R3_TRY_STATUS(check_text_size(e.impl, "expect.impl"));
  R3_TRY(const json* verdict, o.require("verdict"));
  R3_TRY(const std::string verdict_text, read_string(*verdict, o.path("verdict")));
  auto parsed_verdict = parse_verdict(verdict_text);
  if (!parsed_verdict) return Error{"expect." + parsed_verdict.error().message};
  e.verdict = *parsed_verdict;
  if (const json* severity = o.find("severity"); severity && !severity->is_null()) {
    R3_TRY(const std::string severity_text, read_string(*severity, o.path("severity")));
    auto parsed = parse_severity(severity_text);
    if (!parsed) return Error{"expect." + parsed.error().message};
    e.severity = *parsed;
  }
  return e;
}

Status read_trailer(const ObjectReader& o, Case& c) {
  if (const json* profile = o.find("profile")) {
    R3_TRY(std::string profile_text, read_string(*profile, "profile"));
    R3_TRY(c.profile, parse_profile(profile_text));
  }
  if (const json* note = o.find("note")) {
    R3_TRY(c.note, read_string(*note, "note"));
    R3_TRY_STATUS(check_text_size(c.note, "note"));  // the binary form carries at most 1 MiB
  }
  if (const json* expect = o.find("expect")) {
    R3_TRY(c.expect, read_expect(*expect));
  }
  return ok_status();
}

// ---- writing -------------------------------------------------------------------------

ordered_json int_list(const std::vector<int64_t>& values) {
  ordered_json out = ordered_json::array();
  for (int64_t v : values) out.push_back(v);
  return out;
}

ordered_json model_json(const ModelShape& m) {
  ordered_json model = ordered_json::object();
  model["layers"] = m.layers;
  model["top_k"] = m.top_k;
  model["experts"] = m.experts;
  return model;
}

void add_trailer(ordered_json& doc, const Case& c) {
  if (c.profile) doc["profile"] = std::string(to_string(*c.profile));
  if (!c.note.empty()) doc["note"] = c.note;
  if (c.expect) {
    ordered_json expect = ordered_json::object();
    expect["impl"] = c.expect->impl;
    expect["verdict"] = std::string(to_string(c.expect->verdict));
    expect["severity"] = c.expect->severity == Severity::none ? ordered_json(nullptr)
                                                              : ordered_json(std::string(to_string(c.expect->severity)));
    doc["expect"] = std::move(expect);
  }
}

}  // namespace r3::json_fields
