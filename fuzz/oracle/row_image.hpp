// A capture buffer's rows as the step leaves them, tracked as intervals: which source run
// each written range holds and which call wrote it. Rows never written are untouched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reference/rows.hpp"

namespace r3 {

class RowImage {
 public:
  struct Piece {
    int64_t lo = 0, hi = 0;  // buffer rows [lo, hi)
    RowRun source;           // source.first names row lo's identity
    int call = 0;
  };

  void clear() { pieces_.clear(); }
  // Buffer rows [dst, dst + rows) receive rows [src, src + rows) of `from`.
  void write(int64_t dst, const RowTensor& from, int64_t src, int64_t rows, int call);
  const std::vector<Piece>& pieces() const { return pieces_; }

  struct Difference {
    int64_t row = 0;
    RowId got;                    // untouched when nobody wrote the row
    RowId expected;
    std::optional<Piece> writer;  // the write that put `got` there
  };
  // First row that differs from the reference image of dp rank `dp`: rows [0, n) hold tokens
  // (dp, 0..n-1) and every other row is untouched.
  std::optional<Difference> first_difference(int dp, int64_t n) const;

 private:
  void overwrite(Piece piece);
  std::vector<Piece> pieces_;  // sorted, disjoint
  std::vector<Piece> next_;    // overwrite()'s output, kept to reuse its storage
};

// "tokens (0, 5..9)", "token (1, 0)", "SP padding rows 3..4 of dp 1".
std::string describe_run(const RowRun& run, int64_t length);

}  // namespace r3
