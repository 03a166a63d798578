#include "fuzz/cli/explain_table.hpp"

#include <algorithm>
#include <cctype>

namespace r3::explain_text {
namespace {

std::string line(const std::vector<std::string>& row, const std::vector<size_t>& width, const std::string& indent) {
  std::string line = indent;
  for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
    const bool number = !row[i].empty() && (std::isdigit(static_cast<unsigned char>(row[i][0])) != 0);
    const std::string pad(width[i] - row[i].size(), ' ');
    line += (i ? "  " : "") + (number ? pad + row[i] : row[i] + (i + 1 < row.size() ? pad : ""));
  }
  return line + "\n";
}

}  // namespace

std::string list_text(const std::optional<std::vector<int64_t>>& v) {
  if (!v) return "unset";
  std::string s = "[";
  const size_t shown = std::min(v->size(), kMaxListEntries);
  for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + std::to_string((*v)[i]);
  if (shown < v->size()) s += ", ... " + std::to_string(v->size() - shown) + " more";
  return s + "]";
}

std::string Table::render(const std::string& indent) const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) width[i] = header_[i].size();
  for (const auto& row : rows_)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out = line(header_, width, indent);
  const bool fold = rows_.size() > kMaxTableRows;
  size_t lines = 0;
  for (size_t r = 0; r < rows_.size();) {
    if (lines == kMaxTableRows) {
      out += indent + "... " + std::to_string(rows_.size() - r) + " more rows not shown" + kCutNote + "\n";
      break;
    }
    out += line(rows_[r], width, indent);
    ++lines;
    size_t next = r + 1;
    while (fold && next < rows_.size() && alike(rows_[r], rows_[next])) ++next;
    if (next > r + 1) {
      out += indent + "... " + std::to_string(next - r - 1) + " more rows alike, through " + key_text(rows_[next - 1]) +
             "\n";
      ++lines;
    }
    r = next;
  }
  return out;
}

bool Table::alike(const std::vector<std::string>& a, const std::vector<std::string>& b) const {
  if (key_columns_ == 0 || a.size() != b.size() || a.size() < key_columns_) return false;
  return std::equal(a.begin() + static_cast<std::ptrdiff_t>(key_columns_), a.end(),
                    b.begin() + static_cast<std::ptrdiff_t>(key_columns_));
}

std::string Table::key_text(const std::vector<std::string>& row) const {
  std::string s;
  for (size_t i = 0; i < key_columns_ && i < row.size(); ++i) s += (i ? ", " : "") + header_[i] + " " + row[i];
  return s;
}

}  // namespace r3::explain_text
