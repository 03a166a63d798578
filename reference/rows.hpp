// Row provenance: which token a row of a routing tensor carries. Every tensor in the model
// (a rank's batch, an SP shard, the gathered batch) is a list of runs of rows, so symbolic
// judging works on production sizes without materialising a single row.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace r3 {

struct RowRange {
  int64_t lo = 0;
  int64_t hi = 0;  // half-open
  int64_t size() const { return hi - lo; }
  bool operator==(const RowRange&) const = default;
};

enum class RowKind : uint8_t {
  token,        // token (dp, index): real or DP/CUDA-graph dummy token of that rank
  sp_padding,   // SP tail padding of rank dp: padded row `index` (index >= n_d)
  placeholder,  // the one row a finished rank sends during DP chunking
  untouched,    // a capture-buffer row nobody wrote this step: buffer row `index`
};

// One row's identity.
struct RowId {
  RowKind kind = RowKind::untouched;
  int dp = 0;
  int64_t index = 0;
  bool operator==(const RowId&) const = default;
};

// `length` consecutive rows; token and padding runs count `index` upward, row by row.
struct RowRun {
  int64_t length = 0;
  RowKind kind = RowKind::token;
  int dp = 0;
  int64_t first = 0;
  RowId at(int64_t offset) const {
    return {kind, dp, kind == RowKind::placeholder ? first : first + offset};
  }
  bool operator==(const RowRun&) const = default;
};

// A routing tensor as runs of rows (the row content is a function of the row id).
class RowTensor {
 public:
  void clear();
  void append(const RowRun& run);
  void append_slice(const RowTensor& from, RowRange range);  // appends rows [lo, hi) of `from`
  // Room for `runs` runs without growing one at a time (a gathered tensor's run per segment).
  void reserve(size_t runs);
  int64_t rows() const { return rows_; }
  std::span<const RowRun> runs() const { return {data(), count_}; }
  RowId at(int64_t row) const;  // row must be < rows()
  // The run holding `row` (0 <= row < rows()), by bisection: a gathered tensor holds a run per
  // DP rank, and every rank reads from the middle of it.
  size_t run_holding(int64_t row) const;
  int64_t run_start(size_t run) const { return run == 0 ? 0 : ends()[run - 1]; }

 private:
  // A rank's batch or SP shard holds one or two runs (tokens, then padding), and a step has
  // D*T + D of them per call: up to kInlineRuns runs live inline, which spares the step as
  // many allocations. Past that, every run lives in the spilled vectors.
  static constexpr size_t kInlineRuns = 2;
  bool spilled() const { return count_ > kInlineRuns; }
  const RowRun* data() const { return spilled() ? spilled_runs_.data() : inline_runs_.data(); }
  RowRun* data() { return spilled() ? spilled_runs_.data() : inline_runs_.data(); }
  const int64_t* ends() const { return spilled() ? spilled_ends_.data() : inline_ends_.data(); }
  int64_t* ends() { return spilled() ? spilled_ends_.data() : inline_ends_.data(); }

  std::array<RowRun, kInlineRuns> inline_runs_{};
  std::array<int64_t, kInlineRuns> inline_ends_{};  // ends_[i]: first row after run i
  std::vector<RowRun> spilled_runs_;
  std::vector<int64_t> spilled_ends_;
  size_t count_ = 0;
  int64_t rows_ = 0;
};

// "token (1, 5)", "SP padding row 7 of dp 0", "the placeholder row of dp 2", "an untouched row".
std::string describe(const RowId& id);

}  // namespace r3
