// The pieces of the JSON case format (case_json.hpp) that every engine's reader and writer
// share: a strict object reader that names unknown keys, typed readers whose errors name the
// key's path ("topology.dp: expected an integer, got string"), and the fields every case has
// (format, model, profile, note, expect). The base case (base_codec.hpp) and each engine's codec
// (fuzz/engines/NAME/) build their documents from them, so every engine's errors read alike.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3::json_fields {

// "string", "boolean", "array", ...; a non-integer number shows its value.
std::string kind_of(const nlohmann::json& v);

// An object whose keys must come from `allowed`; `where` is its path ("" at the top level).
class ObjectReader {
 public:
  static Result<ObjectReader> open(const nlohmann::json& v, std::string where,
                                   std::initializer_list<std::string_view> allowed);

  const nlohmann::json* find(std::string_view key) const;
  Result<const nlohmann::json*> require(std::string_view key) const;
  std::string path(std::string_view key) const;

 private:
  ObjectReader(const nlohmann::json& v, std::string where) : object_(&v), where_(std::move(where)) {}
  const nlohmann::json* object_;
  std::string where_;
};

// Typed values; `name` is the value's path in error texts.
Result<int64_t> read_int64(const nlohmann::json& v, const std::string& name);
Result<int> read_int(const nlohmann::json& v, const std::string& name);
Result<bool> read_bool(const nlohmann::json& v, const std::string& name);
Result<std::string> read_string(const nlohmann::json& v, const std::string& name);
Result<std::vector<int64_t>> read_int_list(const nlohmann::json& v, const std::string& name);

// "format" must be kCaseFormat.
Status check_format(const ObjectReader& o);
// Texts the binary format could not carry are refused, so every case read round-trips.
Status check_text_size(const std::string& text, std::string_view field);
Result<ModelShape> read_model(const nlohmann::json& v);
Result<Expectation> read_expect(const nlohmann::json& v);
// The keys every case ends with, each optional, read in this order: profile, note, expect.
Status read_trailer(const ObjectReader& o, Case& c);

// Writing: documents keep insertion order (the text form's key order).
nlohmann::ordered_json int_list(const std::vector<int64_t>& values);
nlohmann::ordered_json model_json(const ModelShape& m);
// profile, note and expect, each when set.
void add_trailer(nlohmann::ordered_json& doc, const Case& c);

}  // namespace r3::json_fields
