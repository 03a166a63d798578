#include "fuzz/oracle/row_image.hpp"

#include <algorithm>

namespace r3 {
namespace {

RowRun advance(RowRun run, int64_t by) {
  if (run.kind != RowKind::placeholder) run.first += by;
  run.length -= by;
  return run;
}

}  // namespace

void RowImage::overwrite(Piece piece) {
  if (pieces_.empty() || pieces_.back().hi <= piece.lo) {  // the common case: writing in order
    pieces_.push_back(piece);
    return;
  }
  std::vector<Piece>& next = next_;
  next.clear();
  bool placed = false;
  for (const Piece& p : pieces_) {
    if (p.hi <= piece.lo || p.lo >= piece.hi) {
      if (!placed && p.lo >= piece.hi) {
        next.push_back(piece);
        placed = true;
      }
      next.push_back(p);
      continue;
    }
    if (p.lo < piece.lo) {  // keep the head
      Piece head = p;
      head.hi = piece.lo;
      head.source.length = head.hi - head.lo;
      next.push_back(head);
    }
    if (!placed) {
      next.push_back(piece);
      placed = true;
    }
    if (p.hi > piece.hi) {  // keep the tail
      Piece tail = p;
      tail.source = advance(p.source, piece.hi - p.lo);
      tail.lo = piece.hi;
      next.push_back(tail);
    }
  }
  if (!placed) next.push_back(piece);
  pieces_.swap(next_);
}

void RowImage::write(int64_t dst, const RowTensor& from, int64_t src, int64_t rows, int call) {
  if (rows <= 0 || src >= from.rows()) return;
  const std::span<const RowRun> runs = from.runs();
  // Bisect to the first run read: a rank's rows sit in the middle of a gathered tensor.
  for (size_t i = src <= 0 ? 0 : from.run_holding(src); i < runs.size(); ++i) {
    const int64_t start = from.run_start(i), end = start + runs[i].length;
    const int64_t lo = std::max(start, src), hi = std::min(end, src + rows);
    if (lo < hi) {
      RowRun part = advance(runs[i], lo - start);
      part.length = hi - lo;
      overwrite({dst + (lo - src), dst + (hi - src), part, call});
    }
    if (end >= src + rows) break;
  }
}

std::optional<RowImage::Difference> RowImage::first_difference(int dp, int64_t n) const {
  int64_t row = 0;  // first row not yet checked
  auto untouched_gap = [&](int64_t until) -> std::optional<Difference> {
    if (row < until && row < n) return Difference{row, {RowKind::untouched, 0, row}, {RowKind::token, dp, row}, {}};
    return std::nullopt;
  };
  for (const Piece& p : pieces_) {
    if (auto gap = untouched_gap(p.lo)) return gap;
    // Inside [0, n) the piece must be tokens (dp, lo..hi-1); past n nothing may be written.
    const bool in_order = p.source.kind == RowKind::token && p.source.dp == dp && p.source.first == p.lo;
    if (!in_order || p.lo >= n) {
      const RowId expected = p.lo < n ? RowId{RowKind::token, dp, p.lo} : RowId{RowKind::untouched, 0, p.lo};
      return Difference{p.lo, p.source.at(0), expected, p};
    }
    if (p.hi > n) return Difference{n, p.source.at(n - p.lo), {RowKind::untouched, 0, n}, p};
    row = p.hi;
  }
  return untouched_gap(n);
}

std::string describe_run(const RowRun& run, int64_t length) {
  const std::string last = std::to_string(run.first + length - 1);
  switch (run.kind) {
    case RowKind::token:
      if (length == 1) return describe(run.at(0));
      return "tokens (" + std::to_string(run.dp) + ", " + std::to_string(run.first) + ".." + last + ")";
    case RowKind::sp_padding:
      if (length == 1) return describe(run.at(0));
      return "SP padding rows " + std::to_string(run.first) + ".." + last + " of dp " + std::to_string(run.dp);
    case RowKind::placeholder:
      return describe(run.at(0));
    case RowKind::untouched:
      return "untouched rows";
  }
  return "?";
}

}  // namespace r3
