// The integers a deployment or a metadata-log line holds (fuzz/engines/NAME/deployment.cpp), read
// with their bounds: no list is copied that holds more entries than the cases it seeds can use,
// and no value is wrapped or clamped. Errors name the field, the value and the bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "reference/error.hpp"

namespace r3 {

// A list of 64-bit integers of at most `max_entries` entries, counted before any is copied:
// "FIELD: N entries, at most MAX" (with `why` after it when given). A value beyond int64 is
// quoted as written ("FIELD[i]: 18446744073709551615 is out of range for a 64-bit integer").
Result<std::vector<int64_t>> int_list(const nlohmann::json& v, const std::string& field, size_t max_entries,
                                      const std::string& why = "");

// One integer in [lo, hi]: "FIELD: VALUE is out of range [LO, HI]" (with `why` after it).
Result<int64_t> bounded_int(const nlohmann::json& v, const std::string& field, int64_t lo, int64_t hi,
                            const std::string& why = "");

}  // namespace r3
