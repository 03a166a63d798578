// Parsing JSON text r3fuzz did not write (case files, deployments, log lines, adapter replies):
// one helper, so every reader refuses the same things. nlohmann::json alone keeps the last of
// two equal keys ({"layer": 5, "layer": 0} reads as layer 0) and stops at a NUL byte, ignoring
// whatever follows it; both would let a file say one thing to a reviewer and another to r3fuzz.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "reference/error.hpp"

namespace r3 {

// Every syntax error's message starts with this; the other refusals do not, so a caller that
// words syntax errors its own way (the adapter's "is not JSON") can tell them apart.
inline constexpr std::string_view kInvalidJson = "invalid JSON: ";

// One JSON document. Errors: "invalid JSON: parse error at line L, column C: ...",
// "duplicate key \"K\" at line L, column C" (the position of the second key's closing quote),
// "NUL byte at line L, column C" (anywhere in the text, trailing ones included).
Result<nlohmann::json> parse_json_strictly(std::string_view text);

}  // namespace r3
