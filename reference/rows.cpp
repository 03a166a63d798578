#include "reference/rows.hpp"

#include <algorithm>

#include "reference/error.hpp"

namespace r3 {

void RowTensor::append(const RowRun& run) {
  if (run.length <= 0) return;
  if (!runs_.empty()) {
    RowRun& last = runs_.back();
    const bool contiguous = last.kind == run.kind && last.dp == run.dp && run.kind != RowKind::placeholder &&
                            last.first + last.length == run.first;
    if (contiguous) {
      last.length += run.length;
      rows_ += run.length;
      return;
    }
  }
  runs_.push_back(run);
  rows_ += run.length;
}

void RowTensor::append_slice(const RowTensor& from, RowRange range) {
  R3_CHECK(range.lo >= 0 && range.lo <= range.hi && range.hi <= from.rows(), "slice inside the tensor");
  int64_t start = 0;
  for (const RowRun& run : from.runs_) {
    const int64_t end = start + run.length;
    const int64_t lo = std::max(start, range.lo);
    const int64_t hi = std::min(end, range.hi);
    if (lo < hi) {
      RowRun piece = run;
      piece.length = hi - lo;
      if (run.kind != RowKind::placeholder) piece.first = run.first + (lo - start);
      append(piece);
    }
    if (end >= range.hi) break;
    start = end;
  }
}

RowId RowTensor::at(int64_t row) const {
  R3_CHECK(row >= 0 && row < rows_, "row inside the tensor");
  int64_t start = 0;
  for (const RowRun& run : runs_) {
    if (row < start + run.length) return run.at(row - start);
    start += run.length;
  }
  return {};
}

std::string describe(const RowId& id) {
  switch (id.kind) {
    case RowKind::token:
      return "token (" + std::to_string(id.dp) + ", " + std::to_string(id.index) + ")";
    case RowKind::sp_padding:
      return "SP padding row " + std::to_string(id.index) + " of dp " + std::to_string(id.dp);
    case RowKind::placeholder:
      return "the placeholder row of dp " + std::to_string(id.dp);
    case RowKind::untouched:
      return "an untouched row";
  }
  return "?";
}

}  // namespace r3
