// Cuts a planned case's guarded images out of the arenas the runner returned.
#include <string>

#include "gpu/detail/plan.hpp"
#include "reference/provenance.hpp"

namespace r3::gpu::detail {
namespace {

template <class T>
GuardedImage image_of(const BufferJob& b, const std::vector<T>& arena, int bits) {
  GuardedImage image;
  image.rows = b.rows;
  image.guard_rows = b.guard;
  image.row_width = b.width;
  image.bits = bits;
  image.data.assign(arena.begin() + b.offset, arena.begin() + b.offset + b.elements());  // sign-extends int16
  return image;
}

// Rows of a guard region that differ from the canary, or -1 when intact.
int64_t first_damaged_guard_row(const BufferJob& b, const std::vector<int32_t>& arena) {
  for (int64_t row = 0; row < b.rows + 2 * b.guard; ++row) {
    if (row >= b.guard && row < b.guard + b.rows) continue;
    for (int64_t col = 0; col < b.width; ++col)
      if (arena[static_cast<size_t>(b.offset + row * b.width + col)] != kTensorCanary) return row;
  }
  return -1;
}

}  // namespace

Result<ConcreteOutcome> collect_outcome(PlannedCase&& planned, const DeviceResult& result) {
  for (size_t i = 0; i < planned.gathered.size(); ++i) {
    const BufferJob& b = planned.gathered[i];
    const int64_t row = first_damaged_guard_row(b, result.arena32);
    if (row >= 0) {
      return Error{"gpu: the all-gatherv damaged guard row " + std::to_string(row) + " of gathered tensor " +
                   std::to_string(i) + " (" + std::to_string(b.rows) + " rows, " + std::to_string(b.guard) +
                   " guard rows each side)"};
    }
  }
  ConcreteOutcome out;
  out.allocation = planned.allocation;
  out.ranks.reserve(planned.ranks.size());  // one allocation, not one per doubling
  for (PlannedRank& rank : planned.ranks) {
    ConcreteRank& r = out.ranks.emplace_back();
    r.dp = rank.dp;
    r.tp = rank.tp;
    r.calls = std::move(rank.calls);
    r.capture = image_of(rank.capture, result.arena32, 32);
    if (rank.replay) {
      r.replay = planned.allocation.replay_bits > 16 ? image_of(*rank.replay, result.arena32, 32)
                                                     : image_of(*rank.replay, result.arena16, 16);
    }
  }
  return out;
}

}  // namespace r3::gpu::detail
