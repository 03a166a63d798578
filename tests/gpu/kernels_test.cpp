// The kernel bodies (gpu/detail/kernels.hpp) reached both ways: a device launch divides a flat
// element index into FillBuffers' (row, group, k), the host walk hands them over in order. Both
// must write the same values to the same elements.
#include "gpu/detail/kernels.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace r3::gpu::detail {
namespace {

// Two capture-like buffers (layers of K values, guard rows) and a replay-like one, end to end.
const std::vector<BufferJob> kJobs = {
    {0, 3, 2, 2 * 3, 3, Fill::untouched, 11},        // 3 rows, 2 guard rows each side, L 2, K 3
    {42, 2, 1, 4, 4, Fill::replay_unwritten, 22},    // 2 rows, 1 guard row, K 4
    {58, 1, 1, 2, 2, Fill::tensor, 33},              // 1 row, 1 guard row, K 2
};
constexpr int64_t kElements = 66;  // the jobs hold 64, then two elements nobody writes

std::vector<int32_t> flat_launch() {
  std::vector<int64_t> ends;
  int64_t total = 0;
  for (const BufferJob& b : kJobs) ends.push_back(total += b.elements());
  std::vector<int32_t> out(kElements, -1);
  const FillBuffers<int32_t> body{kJobs.data(), ends.data(), static_cast<int64_t>(kJobs.size()), out.data()};
  for (int64_t i = 0; i < total; ++i) body(i);
  return out;
}

std::vector<int32_t> row_walk() {
  std::vector<int32_t> out(kElements, -1);
  const FillBuffers<int32_t> body{kJobs.data(), nullptr, static_cast<int64_t>(kJobs.size()), out.data()};
  for (const BufferJob& b : kJobs)
    for (int64_t row = 0; row < b.rows + 2 * b.guard; ++row)
      for (int64_t group = 0; group < b.width / b.top_k; ++group)
        for (int64_t k = 0; k < b.top_k; ++k) body.fill(b, row, group, k);
  return out;
}

TEST(FillBuffers, TheRowWalkWritesWhatTheFlatLaunchWrites) {
  const std::vector<int32_t> flat = flat_launch();
  EXPECT_EQ(row_walk(), flat);
  // The values themselves: guard rows their canary, buffer rows their fill, nothing else touched.
  EXPECT_EQ(flat[0], 11);                                    // job 0, guard row 0
  EXPECT_EQ(flat[2 * 6 + 1 * 3 + 2], untouched_value(0, 1, 2));  // job 0, buffer row 0, layer 1, k 2
  EXPECT_EQ(flat[42], 22);                                   // job 1, front guard
  EXPECT_EQ(flat[42 + 4], kReplayUntouched);                 // job 1, buffer row 0
  EXPECT_EQ(flat[58 + 2], kTensorCanary);                    // job 2, its one row
  EXPECT_EQ(flat[58 + 4 + 1], 33);                           // job 2, back guard
  EXPECT_EQ(flat[64], -1);                                   // past every job
}

}  // namespace
}  // namespace r3::gpu::detail
