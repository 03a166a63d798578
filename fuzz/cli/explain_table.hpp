// The bounded text of `r3fuzz explain` (item 8 of issue 15): tables that fold runs of alike
// rows and stop at a fixed length, and lists cut at a fixed count, each cut saying so. Shared by
// the layout report (explain.cpp) and the engines' own (fuzz/engines/NAME/explain.cpp); --json is
// never cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace r3::explain_text {

// A case at the limits has 65536 ranks and 4096 calls, which printed in full is half a gigabyte.
inline constexpr size_t kMaxListEntries = 32;
inline constexpr size_t kMaxTableRows = 64;
inline constexpr size_t kMaxCallsShown = 8;
inline const std::string kCutNote = " (explain's text is bounded; --json lists everything)";

// "[1, 2, ... 30 more]"; "unset" for nullopt.
std::string list_text(const std::optional<std::vector<int64_t>>& v);

// Columns padded to their widest cell, numbers right-aligned; two spaces between columns.
// A table of more than kMaxTableRows rows is folded: the first `key_columns` cells name a row
// (dp, tp), a run of rows alike in every other cell prints as its first row and one
// "... N more rows alike" line, and at most kMaxTableRows lines print in all.
class Table {
 public:
  explicit Table(std::vector<std::string> header, size_t key_columns = 0)
      : header_(std::move(header)), key_columns_(key_columns) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string render(const std::string& indent = "  ") const;

 private:
  bool alike(const std::vector<std::string>& a, const std::vector<std::string>& b) const;
  std::string key_text(const std::vector<std::string>& row) const;

  std::vector<std::string> header_;
  size_t key_columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace r3::explain_text
