// Each fault changes the pipeline as design.md's mutant table says: exact rows for the
// ordering faults, and for the overflow faults the buffer and the number of rows written
// past its end, read off the guard rows.
#include <gtest/gtest.h>

#include "fuzz/oracle/judge.hpp"
#include "gpu/detail/device_plan.hpp"
#include "reference/fault.hpp"
#include "gpu_test_support.hpp"

namespace r3::gpu {
namespace {

using testing::captured;
using testing::gpu;
using testing::rows_before_start;
using testing::rows_past_end;
using testing::run;
using testing::small_case;

TEST(GpuFaults, ReplayPerRankOverflowsByTheGatheredRowsBeyondM) {
  // TP2/DP2 EP SP, M = 4, tokens [4, 4]: G = 2 * 2 * 2 = 8 rows into a replay buffer of M = 4.
  const Case c = small_case(2, 2, true, 4, {4, 4}, Path::gathered, true);
  const ConcreteOutcome out = run(*gpu(Fault::replay_per_rank), c);
  EXPECT_EQ(*out.allocation.replay_rows, 4);
  for (const ConcreteRank& rank : out.ranks) {
    EXPECT_EQ(rows_past_end(*rank.replay), 4);
    EXPECT_EQ(rows_before_start(*rank.replay), 0);
    EXPECT_EQ(rows_past_end(rank.capture), 0);
  }
  const Step step = testing::step_of(c);
  const Judgement j = judge_concrete(c, step, out, "gpu+replay-per-rank");
  EXPECT_EQ(j.classes[0].verdict, Verdict::overflow);
  EXPECT_EQ(j.classes[0].detail, "replay buffer of dp 0 tp 0: 4 rows written past its end (it holds 4 rows)");
  // Without the fault the dispatch-group buffer (M * D * T = 16 rows) holds all 8.
  const ConcreteOutcome fine = run(*gpu(), c);
  for (const ConcreteRank& rank : fine.ranks) EXPECT_EQ(rows_past_end(*rank.replay), 0);
}

TEST(GpuFaults, ReplayDpUnderEpOverflowsWithHeavySpPadding) {
  // D = 2, T = 4, M = 5, tokens [5, 5]: s = 2, G = 16 rows into M * D = 10.
  const Case c = small_case(2, 4, true, 5, {5, 5}, Path::gathered, true);
  const ConcreteOutcome out = run(*gpu(Fault::replay_dp_under_ep), c);
  EXPECT_EQ(*out.allocation.replay_rows, 10);
  for (const ConcreteRank& rank : out.ranks) EXPECT_EQ(rows_past_end(*rank.replay), 6);
}

TEST(GpuFaults, OffByOneCopyWritesOneRowPastAFullBuffer) {
  const Case c = small_case(2, 1, false, 4, {4, 2}, Path::local);
  const ConcreteOutcome out = run(*gpu(Fault::off_by_one_copy), c);
  EXPECT_EQ(rows_past_end(out.ranks[0].capture), 1);  // n_0 = M
  EXPECT_EQ(rows_past_end(out.ranks[1].capture), 0);
  // dp 1 reads one row past its 2-row tensor: the tensor canary lands in buffer row 2.
  EXPECT_EQ(captured(out.ranks[1].capture, 2, 1, 2), "value " + std::to_string(detail::kTensorCanary));
}

TEST(GpuFaults, NoTrimCopiesTheSpPaddingToo) {
  // D = 2, T = 2, M = 3, tokens [3, 3]: s = 2, 4 rows copied into a 3-row buffer.
  const Case c = small_case(2, 2, true, 3, {3, 3}, Path::gathered);
  const ConcreteOutcome out = run(*gpu(Fault::no_trim), c);
  for (const ConcreteRank& rank : out.ranks) EXPECT_EQ(rows_past_end(rank.capture), 1);
  EXPECT_EQ(captured(out.ranks[0].capture, 3, 1, 2), "SP padding row 3 of dp 0");  // the guard row
}

TEST(GpuFaults, LastShardPadCopiesPaddingWhenMoreThanOneShardIsShort) {
  // D = 2, T = 4, M = 5, tokens [5, 5]: s = 2, shards hold 2, 2, 1, 0 tokens; the fault takes 2, 2, 2, 0.
  const Case c = small_case(2, 4, true, 5, {5, 5}, Path::gathered);
  const ConcreteOutcome out = run(*gpu(Fault::last_shard_pad), c);
  EXPECT_EQ(rows_past_end(out.ranks[0].capture), 1);
  EXPECT_EQ(captured(out.ranks[0].capture, 5, 1, 2), "SP padding row 5 of dp 0");
  // With tokens [4, 4] (shards 1, 1, 1, 1) the assumption holds and nothing changes.
  const Case even = small_case(2, 4, true, 5, {4, 4}, Path::gathered);
  EXPECT_EQ(run(*gpu(Fault::last_shard_pad), even).ranks[0].capture.data, run(*gpu(), even).ranks[0].capture.data);
}

TEST(GpuFaults, TpMajorOrderGathersShardsTpFirst) {
  // s = [2, 1]; TP-major gather: (0,0) (0,1) | (1,0) | (0,2) pad | pad. dp 0 copies [0, 3).
  const Case c = small_case(2, 2, true, 4, {3, 1}, Path::gathered);
  const ConcreteOutcome out = run(*gpu(Fault::tp_major_order), c);
  EXPECT_EQ(captured(out.ranks[0].capture, 1, 1, 2), "token (0, 1)");
  EXPECT_EQ(captured(out.ranks[0].capture, 2, 1, 2), "token (1, 0)");
  EXPECT_EQ(captured(out.ranks[2].capture, 0, 1, 2), "SP padding row 3 of dp 0");
}

TEST(GpuFaults, UnpaddedOffsetStartsAtThePrefixSumOfCounts) {
  // tokens [3, 1]: dp 1 starts at n_0 = 3 (SP padding row 3 of dp 0) instead of 4.
  const Case c = small_case(2, 2, true, 4, {3, 1}, Path::gathered);
  const ConcreteOutcome out = run(*gpu(Fault::unpadded_offset), c);
  EXPECT_EQ(out.ranks[2].calls[0].copies.at(0).src_row, 3);
  EXPECT_EQ(captured(out.ranks[2].capture, 0, 1, 2), "SP padding row 3 of dp 0");
}

TEST(GpuFaults, FloorSpRejectsAShardOfCeilRows) {
  const Case c = small_case(2, 2, true, 4, {3, 2}, Path::sp_shard);
  const ConcreteOutcome out = run(*gpu(Fault::floor_sp), c);
  EXPECT_TRUE(out.ranks[0].calls.at(0).rejected);
  EXPECT_EQ(out.ranks[0].calls[0].error, "routed experts have 2 rows; expected 1 (one SP shard, floor(3 / 2))");
  EXPECT_FALSE(out.ranks[2].calls.at(0).rejected);  // n_1 = 2 is even
}

TEST(GpuFaults, FloorSpMisplacesGatheredShards) {
  // tokens [3, 1]: dp 1's start becomes 2 * floor(3 / 2) = 2: token (0, 2).
  const Case c = small_case(2, 2, true, 4, {3, 1}, Path::gathered);
  const ConcreteOutcome out = run(*gpu(Fault::floor_sp), c);
  EXPECT_EQ(captured(out.ranks[2].capture, 0, 1, 2), "token (0, 2)");
}

TEST(GpuFaults, SkipTpGatherCopiesOnlyTheLocalShard) {
  const Case c = small_case(2, 2, true, 4, {3, 2}, Path::sp_shard);
  const ConcreteOutcome out = run(*gpu(Fault::skip_tp_gather), c);
  EXPECT_EQ(captured(out.ranks[1].capture, 0, 1, 2), "token (0, 2)");
  EXPECT_EQ(captured(out.ranks[1].capture, 1, 1, 2), "SP padding row 3 of dp 0");
  EXPECT_EQ(captured(out.ranks[1].capture, 2, 1, 2), "untouched row 2 layer 1");
}

TEST(GpuFaults, NarrowInt16TruncatesExpertIdsAbove32767) {
  // Token (0, j) encodes to 2^29 + 64 j; modulo E = 40000 that is 30912 + 64 j, above 32767 from j = 29.
  Case c = small_case(1, 1, false, 32, {32}, Path::single, true);
  c.model = {1, 1, 40000};
  c.layer = 0;
  const ConcreteOutcome wide = run(*gpu(), c);
  const ConcreteOutcome narrow = run(*gpu(Fault::narrow_int16), c);
  ASSERT_EQ(wide.ranks[0].replay->bits, 32);
  ASSERT_EQ(narrow.ranks[0].replay->bits, 16);
  int truncated = 0;
  for (int64_t row = 0; row < 32; ++row) {
    const int32_t id = replay_value(routing_value({RowKind::token, 0, row}, 0), 40000);
    EXPECT_EQ(id, 30912 + 64 * row);
    EXPECT_EQ(testing::row_of(*wide.ranks[0].replay, row)[0], id);
    EXPECT_EQ(testing::row_of(*narrow.ranks[0].replay, row)[0], static_cast<int16_t>(id));
    truncated += static_cast<int16_t>(id) != id;
  }
  EXPECT_EQ(truncated, 3);
}

TEST(GpuFaults, ChunkRow0OnlyChangesAPolicyThatWritesChunksAtTheirOffset) {
  Case c = small_case(2, 1, false, 8, {5, 2}, Path::local);
  c.dp_chunk = 2;  // chunks [0, 2), [2, 4), [4, 5)
  const ConcreteOutcome fixed = run(*gpu(Fault::none, "r3-fixed"), c);
  const ConcreteOutcome faulty = run(*gpu(Fault::chunk_row0, "r3-fixed"), c);
  EXPECT_EQ(captured(fixed.ranks[0].capture, 4, 1, 2), "token (0, 4)");
  EXPECT_EQ(captured(faulty.ranks[0].capture, 0, 1, 2), "token (0, 4)");
  EXPECT_EQ(captured(faulty.ranks[0].capture, 4, 1, 2), "untouched row 4 layer 1");
  // Under vllm-50874 every chunk already lands at row 0: the fault is a no-op there.
  EXPECT_EQ(run(*gpu(Fault::chunk_row0), c).ranks[0].capture.data, run(*gpu(), c).ranks[0].capture.data);
}

TEST(GpuFaults, LayerUncheckedIsEquivalentOnValidCases) {
  // validate() keeps layer < L, so the missing check never fires (docs/GPU.md).
  const Case c = small_case(2, 2, true, 4, {3, 1}, Path::gathered, true);
  const ConcreteOutcome a = run(*gpu(Fault::layer_unchecked), c), b = run(*gpu(), c);
  for (size_t r = 0; r < a.ranks.size(); ++r) EXPECT_EQ(a.ranks[r].capture.data, b.ranks[r].capture.data);
}

}  // namespace
}  // namespace r3::gpu
