#include "fuzz/implementations/faulty_policy.hpp"

#include <gtest/gtest.h>

#include "reference/capturer.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"
#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

Case sp_case(std::vector<int64_t> tokens, int tp, Path path) {
  const Topology topology{static_cast<int>(tokens.size()), tp, true, true};
  return test::with_model_at_layer(test::make_case(topology, 4, std::move(tokens), path), {2, 1, 4}, 0);
}

// The copies `policy` decides for DP rank d, TP rank t in call `call` of the case's step.
std::vector<Copy> copies(const CapturePolicy& policy, const Case& c, int d, int t, size_t call = 0) {
  EXPECT_TRUE(validate(c).ok());
  auto step = derive_step(c);
  EXPECT_TRUE(step.ok());
  const Call& k = step->calls.at(call);
  const RankView view = k.view(d, t);
  CaptureDecision out;
  policy.decide(capture_call_for(*step, k, view, {c.max_num_tokens, c.model.layers, c.model.top_k}), out);
  EXPECT_FALSE(out.rejected) << out.error;
  return out.copies;
}

std::unique_ptr<CapturePolicy> faulty(Fault f) { return make_faulty_policy(make_r3_fixed_policy(), f); }

// tokens [3, 1], T = 2: n = [3, 1], s = [2, 1], local_sizes [2, 2, 1, 1], G = 6 rows;
// rank 1's token sits at gathered row 4 (after rank 0's padded 4 rows).
const Case kGathered = sp_case({3, 1}, 2, Path::gathered);

TEST(FaultyPolicy, BaseDecisionForReference) {
  EXPECT_EQ(copies(*make_r3_fixed_policy(), kGathered, 1, 0), (std::vector<Copy>{{0, 4, 1, false}}));
  EXPECT_EQ(faulty(Fault::tp_major_order)->name(), "r3-fixed+tp-major-order");
}

TEST(FaultyPolicy, TpMajorOrderLooksForShardsInTpMajorPositions) {
  // TP-major: position of (1, 0) is 0*D + 1, after rank 0's first shard of 2 rows.
  EXPECT_EQ(copies(*faulty(Fault::tp_major_order), kGathered, 1, 0), (std::vector<Copy>{{0, 2, 1, false}}));
  // Rank 0's shards: (0, 0) at row 0, (0, 1) at row s0 + s1 = 3.
  EXPECT_EQ(copies(*faulty(Fault::tp_major_order), kGathered, 0, 0),
            (std::vector<Copy>{{0, 0, 2, false}, {2, 3, 1, false}}));
}

TEST(FaultyPolicy, UnpaddedOffsetStartsAtThePrefixSumOfN) {
  EXPECT_EQ(copies(*faulty(Fault::unpadded_offset), kGathered, 1, 0), (std::vector<Copy>{{0, 3, 1, false}}));
}

TEST(FaultyPolicy, NoTrimCopiesThePaddedShards) {
  EXPECT_EQ(copies(*faulty(Fault::no_trim), kGathered, 0, 0), (std::vector<Copy>{{0, 0, 4, false}}));
}

TEST(FaultyPolicy, FloorSpLosesTheShortShard) {
  EXPECT_EQ(copies(*faulty(Fault::floor_sp), kGathered, 0, 0), (std::vector<Copy>{{0, 0, 2, false}}));
  EXPECT_EQ(copies(*faulty(Fault::floor_sp), kGathered, 1, 0), (std::vector<Copy>{}));
}

TEST(FaultyPolicy, LastShardPadOnlyWrongWhenPaddingSpansShards) {
  EXPECT_EQ(copies(*faulty(Fault::last_shard_pad), kGathered, 0, 0), (std::vector<Copy>{{0, 0, 3, false}}));
  // n = 1, T = 3: shards 1 and 2 are both padding; the fault takes (T-1)*s = 2 rows.
  EXPECT_EQ(copies(*faulty(Fault::last_shard_pad), sp_case({1, 0}, 3, Path::gathered), 0, 0),
            (std::vector<Copy>{{0, 0, 2, false}}));
}

TEST(FaultyPolicy, SkipTpGatherReadsTheLocalShard) {
  const Case c = sp_case({3, 1}, 2, Path::sp_shard);
  EXPECT_EQ(copies(*make_r3_fixed_policy(), c, 0, 1), (std::vector<Copy>{{0, 0, 3, true}}));
  EXPECT_EQ(copies(*faulty(Fault::skip_tp_gather), c, 0, 1), (std::vector<Copy>{{0, 0, 3, false}}));
}

TEST(FaultyPolicy, OffByOneCopyMovesOneMoreRowInEveryCopy) {
  EXPECT_EQ(copies(*faulty(Fault::off_by_one_copy), kGathered, 0, 0), (std::vector<Copy>{{0, 0, 4, false}}));
  // A DP chunk under SP: one copy per TP rank's chunk, each one row too long (one loop, one bug).
  Case c = sp_case({3, 1}, 2, Path::sp_shard);
  c.dp_chunk = 1;
  EXPECT_EQ(copies(*make_r3_fixed_policy(), c, 0, 0), (std::vector<Copy>{{0, 0, 1, true}, {2, 1, 1, true}}));
  EXPECT_EQ(copies(*faulty(Fault::off_by_one_copy), c, 0, 0), (std::vector<Copy>{{0, 0, 2, true}, {2, 1, 2, true}}));
}

TEST(FaultyPolicy, ChunkRow0WritesEveryChunkAtRowZero) {
  Case c = test::with_model_at_layer(test::make_case(test::kDp2, 2, {2, 0}, Path::local), {1, 1, 4}, 0);
  c.dp_chunk = 1;
  EXPECT_EQ(copies(*make_r3_fixed_policy(), c, 0, 0, 1), (std::vector<Copy>{{1, 0, 1, false}}));
  EXPECT_EQ(copies(*faulty(Fault::chunk_row0), c, 0, 0, 1), (std::vector<Copy>{{0, 0, 1, false}}));
}

TEST(FaultyPolicy, AllocationFaults) {
  Case c = kGathered;
  c.monolithic = true;
  c.model.experts = 40000;
  const Allocation base = make_r3_fixed_policy()->allocate(c);
  EXPECT_EQ(base.replay_rows, 2 * 4);  // T*ceil(M/T) per DP rank
  EXPECT_EQ(base.replay_bits, 32);
  EXPECT_EQ(faulty(Fault::replay_per_rank)->allocate(c).replay_rows, 4);
  EXPECT_EQ(faulty(Fault::replay_dp_under_ep)->allocate(c).replay_rows, 8);
  EXPECT_EQ(faulty(Fault::narrow_int16)->allocate(c).replay_bits, 16);
  c.monolithic = false;
  EXPECT_EQ(faulty(Fault::replay_per_rank)->allocate(c).replay_rows, std::nullopt);
}

TEST(FaultyPolicy, LayerUncheckedAcceptsALayerPastTheBuffer) {
  CaptureCall call;
  call.rows = 1;
  call.layer = 3;
  call.capture_buffer = {4, 2, 1};
  CaptureDecision out;
  make_r3_fixed_policy()->decide(call, out);
  EXPECT_TRUE(out.rejected);
  out.clear();
  faulty(Fault::layer_unchecked)->decide(call, out);
  EXPECT_FALSE(out.rejected);
  EXPECT_EQ(out.copies, (std::vector<Copy>{{0, 0, 1, false}}));
}

}  // namespace
}  // namespace r3
