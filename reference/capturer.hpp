// The reference capturer: what a correct capture does. After the step, capture-buffer rows
// [0, n_d) of the layer hold tokens (d, 0 .. n_d-1) in order on every (d, t), and nothing
// else is written. Per call, that means: every row of the rank's own tokens goes to the
// buffer row equal to its token index.
#pragma once

#include <optional>
#include <vector>

#include "reference/capture.hpp"
#include "reference/layout.hpp"

namespace r3 {

// The tensor a correct capture copies from: the TP all-gather on sp_shard, else the received rows.
RowTensor reference_source(const Call& call, const RankView& view);

// The tensor a copy reads: what `view` received, or with `from_tp_gather` the TP all-gather:
// the reference one on sp_shard, else the concatenation of what every TP rank of the group
// received (corner case 10 (docs/layout-contract.md section 8): the collective runs and gathers whatever each rank holds),
// built in `scratch`, as is a slice of a tensor (an SP shard read on its own).
const RowTensor& copy_source(const Call& call, const RankView& view, bool from_tp_gather, int tp, RowTensor& scratch);

// The copies a correct capture makes for `view` in `call`.
std::vector<Copy> expected_copies(const Call& call, const RankView& view);

// Rows [lo, hi) of the reference source holding this rank's tokens, when they are one
// contiguous range (every single-call step); nullopt otherwise.
std::optional<RowRange> expected_source_range(const Call& call, const RankView& view);

// What capture() sees on `view` during `call`.
CaptureCall capture_call_for(const Step& step, const Call& call, const RankView& view, const BufferShape& buffer);

}  // namespace r3
