#include "reference/rows.hpp"

#include <algorithm>

#include "reference/error.hpp"

namespace r3 {

void RowTensor::clear() {
  count_ = 0;
  rows_ = 0;
  spilled_runs_.clear();
  spilled_ends_.clear();
}

void RowTensor::reserve(size_t runs) {
  if (runs <= kInlineRuns) return;
  spilled_runs_.reserve(runs);
  spilled_ends_.reserve(runs);
}

void RowTensor::append(const RowRun& run) {
  if (run.length <= 0) return;
  if (count_ > 0) {
    RowRun& last = data()[count_ - 1];
    const bool contiguous = last.kind == run.kind && last.dp == run.dp && run.kind != RowKind::placeholder &&
                            last.first + last.length == run.first;
    if (contiguous) {
      last.length += run.length;
      rows_ += run.length;
      ends()[count_ - 1] = rows_;
      return;
    }
  }
  rows_ += run.length;
  if (count_ < kInlineRuns) {
    inline_runs_[count_] = run;
    inline_ends_[count_] = rows_;
  } else {
    if (count_ == kInlineRuns) {  // spill: from here on every run lives in the vectors
      spilled_runs_.assign(inline_runs_.begin(), inline_runs_.end());
      spilled_ends_.assign(inline_ends_.begin(), inline_ends_.end());
    }
    spilled_runs_.push_back(run);
    spilled_ends_.push_back(rows_);
  }
  ++count_;
}

void RowTensor::append_slice(const RowTensor& from, RowRange range) {
  R3_CHECK(range.lo >= 0 && range.lo <= range.hi && range.hi <= from.rows(), "slice inside the tensor");
  if (range.lo == range.hi) return;
  for (size_t i = from.run_holding(range.lo); i < from.count_; ++i) {
    const RowRun& run = from.data()[i];
    const int64_t start = from.run_start(i), end = from.ends()[i];
    const int64_t lo = std::max(start, range.lo);
    const int64_t hi = std::min(end, range.hi);
    RowRun piece = run;
    piece.length = hi - lo;
    if (run.kind != RowKind::placeholder) piece.first = run.first + (lo - start);
    append(piece);
    if (end >= range.hi) break;
  }
}

size_t RowTensor::run_holding(int64_t row) const {
  R3_CHECK(row >= 0 && row < rows_, "row inside the tensor");
  const int64_t* end = ends();
  return static_cast<size_t>(std::upper_bound(end, end + count_, row) - end);
}

RowId RowTensor::at(int64_t row) const {
  const size_t run = run_holding(row);
  return data()[run].at(row - run_start(run));
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
