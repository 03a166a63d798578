#include "fuzz/adapter/row_writes.hpp"

#include <algorithm>

#include "fuzz/oracle/host_executor.hpp"
#include "reference/provenance.hpp"

namespace r3 {
namespace {

// Re-lays `image` out with `guard` guard rows on each side (never fewer than it has).
void grow_guard(GuardedImage& image, int64_t guard) {
  if (guard <= image.guard_rows) return;
  const int64_t width = image.row_width, extra = guard - image.guard_rows;
  std::vector<int32_t> data(static_cast<size_t>((image.rows + 2 * guard) * width), stored_value(kCanary, image.bits));
  std::copy(image.data.begin(), image.data.end(), data.begin() + extra * width);
  image.data = std::move(data);
  image.guard_rows = guard;
}

}  // namespace

int64_t apply_row_writes(GuardedImage& image, int layer, int top_k, const std::vector<RowWrite>& writes,
                         int64_t max_guard_rows) {
  int64_t reach = 0;
  for (const RowWrite& w : writes) reach = std::max({reach, -w.dst_row, w.dst_row + 1 - image.rows});
  grow_guard(image, std::min({reach, max_guard_rows, kMaxGuardRows}));
  int64_t clamped = 0;
  int32_t* body = image.data.data() + image.guard_rows * image.row_width;
  for (const RowWrite& w : writes) {
    // A write beyond the largest guard region still shows: it lands on the outermost row.
    const int64_t row = std::clamp(w.dst_row, -image.guard_rows, image.rows + image.guard_rows - 1);
    clamped += row != w.dst_row;
    int32_t* slot = body + row * image.row_width + int64_t{layer} * top_k;
    for (int k = 0; k < top_k; ++k) slot[k] = stored_value(w.values[static_cast<size_t>(k)], image.bits);
  }
  return clamped;
}

}  // namespace r3
