// Parsing JSON text r3fuzz did not write (case files, deployments, log lines, adapter replies):
// one helper, so every reader refuses the same things. nlohmann::json alone keeps the last of
// two equal keys ({"layer": 5, "layer": 0} reads as layer 0) and stops at a NUL byte, ignoring
// whatever follows it; both would let a file say one thing to a reviewer and another to r3fuzz.
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>

#include <nlohmann/json.hpp>

#include "reference/error.hpp"

namespace r3 {

// Every syntax error's message starts with this; the other refusals do not, so a caller that
// words syntax errors its own way (the adapter's "is not JSON") can tell them apart.
inline constexpr std::string_view kInvalidJson = "invalid JSON: ";

// What parsing may cost. Nesting is capped for every document (no file or reply r3fuzz reads
// nests deeper than 8, and each level costs memory and stack whatever its size); the parsed
// size (sizeof(json) per value, plus the bytes of strings and keys and a map node per key) is
// capped where a document's text may be large and hostile, as an adapter's 64 MiB reply line
// is: a reply of tiny values costs ten times its size once parsed (docs/SECURITY.md).
inline constexpr size_t kMaxJsonDepth = 64;
struct JsonBudget {
  size_t max_depth = kMaxJsonDepth;
  size_t max_parsed_bytes = std::numeric_limits<size_t>::max();
};

// One JSON document. Errors: "invalid JSON: parse error at line L, column C: ...",
// "duplicate key \"K\" at line L, column C" (the position of the second key's closing quote),
// "NUL byte at line L, column C" (anywhere in the text, trailing ones included),
// "nested deeper than 64 levels at line L, column C", "larger than the budget of N bytes once
// parsed, at line L, column C".
Result<nlohmann::json> parse_json_strictly(std::string_view text, const JsonBudget& budget = {});

}  // namespace r3
