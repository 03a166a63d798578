// The small Python-literal writers every exported module's data lines use (numbers, lists, row
// runs). Texts from a case never go through these: fuzz/io/source_text.hpp escapes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reference/rows.hpp"

namespace r3::py {

inline std::string text(int64_t v) { return std::to_string(v); }
inline std::string boolean(bool v) { return v ? "True" : "False"; }

template <class Ints>
std::string list(const Ints& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + text(static_cast<int64_t>(values[i]));
  return out + "]";
}

inline std::string optional_list(const std::optional<std::vector<int64_t>>& values) {
  return values ? list(*values) : "None";
}

inline std::string_view kind_name(RowKind kind) {
  switch (kind) {
    case RowKind::token: return "token";
    case RowKind::sp_padding: return "sp_padding";
    case RowKind::placeholder: return "placeholder";
    case RowKind::untouched: return "untouched";
  }
  return "untouched";
}

// (kind, dp, first row index, rows), the run form TENSORS and EXPECTED use.
inline std::string run_tuple(const RowRun& r) {
  return "\"" + std::string(kind_name(r.kind)) + "\", " + text(r.dp) + ", " + text(r.first) + ", " + text(r.length);
}

}  // namespace r3::py
