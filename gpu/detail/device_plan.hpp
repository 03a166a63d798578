// The device work of one batch of cases as flat job tables: plain structs a kernel can read,
// built on the host by plan.cpp and executed by a runner (host or CUDA). Offsets count
// elements of an arena: arena32 holds int32 tensors and buffers, arena16 int16 replay buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reference/guard_rows.hpp"

namespace r3::gpu::detail {

// kMinGuardRows and kReplayUntouched (reference/guard_rows.hpp) are the host executor's too.

// Guard rows of routing tensors (rank contributions, gathered tensors) hold their own canary,
// distinct from the buffers' kCanary: a copy that reads past a tensor then leaves a visible
// value even where it lands in a buffer's guard.
inline constexpr int32_t kTensorCanary = -0x5A5A5A5B;

enum class Fill : int32_t { tensor = 0, untouched = 1, replay_unwritten = 2 };

// A guarded buffer: `guard` rows, `rows` rows, `guard` rows (GuardedImage's layout).
struct BufferJob {
  int64_t offset = 0;  // first element of the front guard
  int64_t rows = 0;
  int64_t guard = 0;
  int64_t width = 0;   // values per row
  int32_t top_k = 1;   // for Fill::untouched: value (row, layer = col / K, k = col % K)
  Fill fill = Fill::tensor;
  int32_t guard_value = 0;  // kCanary for buffers, kTensorCanary for tensors (set by the planner)
  int64_t elements() const { return (rows + 2 * guard) * width; }
  int64_t row0() const { return offset + guard * width; }
};

// Rows [0, rows) of a rank's tensor: routing_value of row id (kind, dp, first + i), K values each.
struct MaterializeJob {
  int64_t dst = 0;  // element of row 0
  int64_t rows = 0;
  int64_t first = 0;
  int32_t kind = 0;  // RowKind
  int32_t dp = 0;
  int32_t top_k = 1;
};

// One all-gatherv: each group rank's contribution copied into its offset of the output.
struct GatherPiece {
  int64_t src = 0;
  int64_t dst = 0;
  int64_t count = 0;  // elements
  int32_t root = 0;   // group rank that owns the contribution
};
struct GatherOp {
  std::vector<GatherPiece> pieces;  // in group-rank order
};

// Segmented exclusive scan: values[i] in segment keys[i]; offsets[i] = sum of earlier values of that segment.
struct ScanInput {
  std::vector<int64_t> keys;
  std::vector<int64_t> values;
};

// Monolithic kernel output: every processed row's K routing values as expert ids, written
// unchecked into the replay buffer (16-bit storage unless wide).
struct ReplayJob {
  int64_t src = 0;  // arena32 element of input row 0
  int64_t rows = 0;
  int64_t dst = 0;  // element of replay row 0 (arena16, or arena32 when wide)
  int32_t top_k = 1;
  int32_t experts = 1;
  int32_t wide = 0;
};

// Capture: rows [src_row, src_row + rows) of a [*, K] tensor into buffer rows
// [dst_row, dst_row + rows) of a [*, L, K] buffer at `layer`. With offset_index >= 0 the
// source row is offsets[offset_index] + src_row (device-computed shard offset).
struct CaptureJob {
  int64_t src = 0;     // element of source row 0
  int64_t src_lo = 0;  // readable elements [src_lo, src_hi): the tensor and its guards
  int64_t src_hi = 0;
  int64_t src_row = 0;
  int64_t offset_index = -1;
  int64_t rows = 0;
  int64_t dst = 0;     // element of buffer row 0
  int64_t dst_lo = 0;  // writable elements [dst_lo, dst_hi): the buffer and its guards
  int64_t dst_hi = 0;
  int64_t dst_row = 0;
  int32_t top_k = 1;
  int32_t row_width = 1;  // L * K
  int32_t layer = 0;
  // The source's row width and first column: 0 and 0 for a [*, K] tensor; L * K and layer * K
  // when the source is itself a [*, L, K] buffer (SGLang's window reads the device buffer).
  int32_t src_width = 0;
  int32_t src_col = 0;
};

struct DevicePlan {
  int64_t arena32 = 0;
  int64_t arena16 = 0;
  std::vector<BufferJob> buffers32;
  std::vector<BufferJob> buffers16;
  std::vector<MaterializeJob> materialize;
  std::vector<GatherOp> gathers;
  ScanInput scan;
  // Writes of one wave never overlap; waves run in order, so later calls overwrite earlier ones.
  std::vector<std::vector<ReplayJob>> replay_waves;
  std::vector<std::vector<CaptureJob>> capture_waves;

  // Planners append through these, which reuse the storage a cleared plan kept: a new
  // all-gatherv, and wave `wave` (the waves grown to hold it).
  GatherOp& add_gather();
  std::vector<ReplayJob>& replay_wave(size_t wave);
  std::vector<CaptureJob>& capture_wave(size_t wave);
  // Empties the plan for the next batch but keeps every table's storage (the inner ones as
  // spares for the appends above): once the tables have grown to fit the cases, planning one
  // allocates nothing, where under ASan each allocation costs more than planning a row.
  void clear();

  // Inner tables of plans cleared earlier, emptied, with their storage.
  std::vector<std::vector<GatherPiece>> spare_pieces;
  std::vector<std::vector<ReplayJob>> spare_replay_waves;
  std::vector<std::vector<CaptureJob>> spare_capture_waves;
};

// What a runner hands back: both arenas as the kernels left them.
struct DeviceResult {
  std::vector<int32_t> arena32;
  std::vector<int16_t> arena16;
};

}  // namespace r3::gpu::detail
