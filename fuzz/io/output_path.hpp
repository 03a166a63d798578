// Where r3fuzz may write: only inside the folder the user named (--out, or the input's own
// folder for shrink), under names that cannot climb out of it. Every file r3fuzz writes from a
// name it did not choose (a deployment's "name", a finding named after an adapter command, an
// input file's stem) goes through output_path_inside() (docs/SECURITY.md).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "reference/error.hpp"

namespace r3 {

// Names taken from data files (a deployment's "name") are at most this long, so that
// "<name>-<16 hex>.json" stays well below the 255-byte file-name limit of common file systems.
inline constexpr size_t kMaxDataNameLength = 100;

// Ok when `name` is a safe file-name stem: 1 to kMaxDataNameLength characters from letters,
// digits, '-', '_' and '.', and no "..". The error names `what` ("name") and the rule broken.
Status check_safe_name(std::string_view name, std::string_view what);

// A file name made from arbitrary text (a bug signature naming an adapter command): characters
// outside [A-Za-z0-9._+-] become '-', a leading '.' becomes '-', and text longer than
// kMaxDataNameLength is cut and suffixed with 16 hex digits of its hash, so two long names stay
// distinct. Then `extension` (".json") is appended.
std::string file_name_from_text(std::string_view text, std::string_view extension);

// `dir / name`, refused unless `name` is one plain path component (no '/', not "." or "..")
// and the result is not an existing symbolic link: the file lands inside `dir`, nowhere else.
Result<std::filesystem::path> output_path_inside(const std::filesystem::path& dir, const std::string& name);

}  // namespace r3
