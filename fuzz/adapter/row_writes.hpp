// Rows an adapter wrote itself (the "rows" form of a reply), placed into a rank's guarded
// capture buffer as the host executor left it. A write outside the buffer lands in the
// guard rows, which grow to hold it (up to the caller's bound, which the case sets: a reply's
// dst_row is data and sizes nothing beyond what the case needs), so the concrete judge
// reports the overflow with its extent.
#pragma once

#include <cstdint>
#include <vector>

#include "fuzz/adapter/protocol.hpp"
#include "reference/implementation.hpp"

namespace r3 {

// Writes each row's values at `layer` of `image` ([rows, L*K] with K = values per row), in
// order, growing its guard regions to at most `max_guard_rows` rows. Returns how many rows fell
// beyond even the largest guard region: those land on its outermost row, so the overflow is
// still seen (its extent then reads as the guard's).
int64_t apply_row_writes(GuardedImage& image, int layer, int top_k, const std::vector<RowWrite>& writes,
                         int64_t max_guard_rows);

}  // namespace r3
