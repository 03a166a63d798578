// DevicePlan's reuse (gpu/detail/device_plan.cpp): clear() empties every table and keeps its
// storage, and the appends hand that storage back, so a reused plan equals a fresh one.
#include "gpu/detail/device_plan.hpp"

#include <gtest/gtest.h>

namespace r3::gpu::detail {
namespace {

void fill(DevicePlan& plan) {
  plan.arena32 = 40;
  plan.arena16 = 8;
  plan.buffers32.push_back({0, 4, 2, 4, 1, Fill::tensor, 0});
  plan.buffers16.push_back({0, 2, 2, 2, 1, Fill::replay_unwritten, 0});
  plan.materialize.push_back({0, 4, 0, 0, 0, 1});
  plan.scan.keys = {0, 0};
  plan.scan.values = {3, 0};
  plan.add_gather().pieces = {{0, 8, 4, 0}, {4, 12, 4, 1}};
  plan.add_gather().pieces = {{16, 20, 2, 0}};
  plan.replay_wave(1).push_back({});
  plan.capture_wave(2).push_back({});
  plan.capture_wave(0).push_back({});
}

TEST(DevicePlan, WavesGrowToHoldTheWaveAsked) {
  DevicePlan plan;
  plan.capture_wave(2).push_back({});
  ASSERT_EQ(plan.capture_waves.size(), 3u);
  EXPECT_TRUE(plan.capture_waves[0].empty());
  EXPECT_EQ(plan.capture_waves[2].size(), 1u);
  plan.capture_wave(1).push_back({});
  EXPECT_EQ(plan.capture_waves.size(), 3u);
  EXPECT_EQ(plan.capture_waves[1].size(), 1u);
}

TEST(DevicePlan, ClearEmptiesEveryTable) {
  DevicePlan plan;
  fill(plan);
  plan.clear();
  EXPECT_EQ(plan.arena32, 0);
  EXPECT_EQ(plan.arena16, 0);
  EXPECT_TRUE(plan.buffers32.empty());
  EXPECT_TRUE(plan.buffers16.empty());
  EXPECT_TRUE(plan.materialize.empty());
  EXPECT_TRUE(plan.scan.keys.empty());
  EXPECT_TRUE(plan.scan.values.empty());
  EXPECT_TRUE(plan.gathers.empty());
  EXPECT_TRUE(plan.replay_waves.empty());
  EXPECT_TRUE(plan.capture_waves.empty());
}

TEST(DevicePlan, AppendsAfterClearReuseTheStorageAndStartEmpty) {
  DevicePlan plan;
  fill(plan);
  const size_t buffers = plan.buffers32.capacity();
  plan.clear();
  EXPECT_EQ(plan.buffers32.capacity(), buffers);
  // Both gathers' piece tables are spares now: new gathers take them, emptied.
  ASSERT_EQ(plan.spare_pieces.size(), 2u);
  GatherOp& op = plan.add_gather();
  EXPECT_TRUE(op.pieces.empty());
  EXPECT_GE(op.pieces.capacity(), 1u);
  EXPECT_EQ(plan.spare_pieces.size(), 1u);
  std::vector<CaptureJob>& wave = plan.capture_wave(0);
  EXPECT_TRUE(wave.empty());
  EXPECT_GE(wave.capacity(), 1u);
}

TEST(DevicePlan, AReusedPlanHoldsWhatAFreshOneDoes) {
  DevicePlan reused;
  fill(reused);
  fill(reused);  // a larger plan first
  reused.clear();
  fill(reused);
  DevicePlan fresh;
  fill(fresh);
  EXPECT_EQ(reused.arena32, fresh.arena32);
  ASSERT_EQ(reused.gathers.size(), fresh.gathers.size());
  for (size_t i = 0; i < fresh.gathers.size(); ++i) {
    ASSERT_EQ(reused.gathers[i].pieces.size(), fresh.gathers[i].pieces.size());
    for (size_t p = 0; p < fresh.gathers[i].pieces.size(); ++p) {
      EXPECT_EQ(reused.gathers[i].pieces[p].dst, fresh.gathers[i].pieces[p].dst);
      EXPECT_EQ(reused.gathers[i].pieces[p].count, fresh.gathers[i].pieces[p].count);
    }
  }
  ASSERT_EQ(reused.capture_waves.size(), fresh.capture_waves.size());
  for (size_t w = 0; w < fresh.capture_waves.size(); ++w)
    EXPECT_EQ(reused.capture_waves[w].size(), fresh.capture_waves[w].size());
  ASSERT_EQ(reused.replay_waves.size(), fresh.replay_waves.size());
  for (size_t w = 0; w < fresh.replay_waves.size(); ++w)
    EXPECT_EQ(reused.replay_waves[w].size(), fresh.replay_waves[w].size());
}

}  // namespace
}  // namespace r3::gpu::detail
