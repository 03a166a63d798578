// The JSON case format "r3fuzz-case/1" (design.md): read, validate and write. Reading
// rejects unknown keys and wrong types naming the key's path ("topology.dp: expected an
// integer, got string"), reports malformed JSON with the parser's position, and runs
// validate() so out-of-range values are named too. Duplicate keys and NUL bytes are refused
// (fuzz/io/strict_json.hpp); files are read through the bounded reader (fuzz/io/input_file.hpp).
// "engine" (absent: the default engine) chooses the codec that reads and writes the rest
// (engine_codec.hpp). Nothing here throws.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

// Parses and validates a case from JSON text.
Result<Case> case_from_json_text(std::string_view text);

// Reads and validates a case from a parsed JSON document.
Result<Case> case_from_json(const nlohmann::json& doc);

// The case as a JSON document (nlohmann::json orders keys alphabetically; the text form
// below keeps design.md's order). Defaults (microbatches 1, no dp_chunk, no metadata,
// empty note, no expect) are omitted.
nlohmann::json case_to_json(const Case& c);

// Pretty text, 2-space indent, design.md's key order; small objects and integer lists on
// one line. Ends with a newline.
std::string case_to_json_text(const Case& c);

// Reads a case file; every error starts with the file's path.
Result<Case> read_case_file(const std::string& path);

// Writes case_to_json_text(c) to `path`; the error names the file.
Status write_case_file(const std::string& path, const Case& c);

}  // namespace r3
