// The inputs of every capture call of one step, per rank, as an engine hands them to its
// capturer (reference::derive_step), and the rows the reference expects in each rank's buffer
// afterwards (reference/capturer.hpp): everything an exported test embeds, as runs of rows, so
// a production-sized step stays a few lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/rows.hpp"

namespace r3 {

struct CallInputs {
  int index = 0;
  int64_t row_offset = 0;  // where the call's rows start in the step (micro-batch or chunk start)
  int64_t chunk_size = 0;  // C when DP chunking, else 0
  // DP metadata as the forward context holds it during the call; nullopt: none (D = 1).
  std::optional<std::vector<int64_t>> num_tokens_across_dp;
  std::optional<std::vector<int64_t>> local_sizes;  // nullopt: unset
  int64_t kernel_rows = 0;  // rows the monolithic kernel processes in this call (0 when not monolithic)
  // Per rank d*T + t: index into StepInputs::tensors of the routing tensor capture() receives,
  // and of what the TP all-gather returns there (-1 when T = 1: there is no TP group to gather).
  std::vector<int> received;
  std::vector<int> tp_gather;
};

// Rows [dst_row, dst_row + run.length) of a rank's buffer at the case's layer hold `run`.
struct ExpectedRun {
  int64_t dst_row = 0;
  RowRun run;
};

struct StepInputs {
  std::vector<std::vector<RowRun>> tensors;  // each distinct tensor of the step once
  std::vector<CallInputs> calls;
  std::vector<int64_t> num_tokens;           // n_d: the rows each DP rank runs with
  // Per rank d*T + t, the rows the reference expects after the step, in order; every other
  // buffer row stays as it was (an engine that publishes its own rows, EngineTarget::published_run:
  // those, for SGLang tokens (d, 0 .. n_d-1) on every rank). Empty when the step must be rejected.
  std::vector<std::vector<ExpectedRun>> expected;
  std::optional<std::string> rejection;  // why every implementation must reject the step
  int64_t row_span = 0;                  // 1 + the largest row index any run names
  // EngineTarget::host_slots (SGLang: the most KV slots of a rank + 1, slot 0: padding); 0: none.
  int64_t host_slots = 0;
};

// What an exported module lists grows with ranks times calls (each rank's tensor per call), and
// with the runs of rows of every distinct tensor and of every rank's expected rows. At most this
// many such entries (about 150 MB of Python): a larger step is refused as soon as its count passes
// the bound, before anything more is built (docs/SECURITY.md, memory budgets).
inline constexpr int64_t kMaxExportEntries = int64_t{1} << 22;

// An error when the case is invalid or its module would list more than kMaxExportEntries.
Result<StepInputs> step_inputs(const Case& c);

}  // namespace r3
