#include "fuzz/seed/int_list.hpp"

#include <climits>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace r3 {
namespace {

std::string with_why(std::string message, const std::string& why) { return why.empty() ? message : message + " " + why; }

// The integer `v` holds, or an error quoting it as the file wrote it.
Result<int64_t> integer(const nlohmann::json& v, const std::string& field) {
  if (!v.is_number_integer()) return Error{field + ": expected an integer"};
  // get<int64_t>() of 2^64-1 is -1: a message would then quote a number the file never held.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return Error{field + ": " + std::to_string(v.get<uint64_t>()) + " is out of range for a 64-bit integer"};
  }
  return v.get<int64_t>();
}

}  // namespace

Result<std::vector<int64_t>> int_list(const nlohmann::json& v, const std::string& field, size_t max_entries,
                                      const std::string& why) {
  if (!v.is_array()) return Error{field + ": expected a list of integers"};
  if (v.size() > max_entries) {
    return Error{with_why(field + ": " + std::to_string(v.size()) + " entries, at most " + std::to_string(max_entries), why)};
  }
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    R3_TRY(const int64_t x, integer(v[i], field + "[" + std::to_string(i) + "]"));
    out.push_back(x);
  }
  return out;
}

Result<int64_t> bounded_int(const nlohmann::json& v, const std::string& field, int64_t lo, int64_t hi,
                            const std::string& why) {
  R3_TRY(const int64_t x, integer(v, field));
  if (x < lo || x > hi) {
    return Error{with_why(field + ": " + std::to_string(x) + " is out of range [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "]",
                          why)};
  }
  return x;
}

}  // namespace r3
