// The GPU pipeline on the host backend: each kernel's output row by row on small cases.
#include "gpu/gpu_implementation.hpp"

#include <gtest/gtest.h>

#include "gpu_test_support.hpp"

namespace r3::gpu {
namespace {

using testing::captured;
using testing::gpu;
using testing::run;
using testing::small_case;

TEST(GpuPipeline, GatheredDpCaptureHoldsEachRanksTokensInOrder) {
  // DP [2, 3], no SP: the all-gatherv gives (0,0) (0,1) (1,0) (1,1) (1,2); branch naive_total.
  const Case c = small_case(2, 1, false, 4, {2, 3}, Path::gathered);
  const ConcreteOutcome out = run(*gpu(), c);
  ASSERT_EQ(out.ranks.size(), 2u);
  const GuardedImage& dp1 = out.ranks[1].capture;
  EXPECT_EQ(out.ranks[1].calls.at(0).branch, branch::naive_total);
  EXPECT_EQ(captured(dp1, 0, 1, 2), "token (1, 0)");
  EXPECT_EQ(captured(dp1, 1, 1, 2), "token (1, 1)");
  EXPECT_EQ(captured(dp1, 2, 1, 2), "token (1, 2)");
  EXPECT_EQ(captured(dp1, 3, 1, 2), "untouched row 3 layer 1");
  for (int64_t row = 0; row < 4; ++row) EXPECT_EQ(captured(dp1, row, 0, 2), "untouched row " + std::to_string(row) + " layer 0");
  const GuardedImage& dp0 = out.ranks[0].capture;
  EXPECT_EQ(captured(dp0, 0, 1, 2), "token (0, 0)");
  EXPECT_EQ(captured(dp0, 1, 1, 2), "token (0, 1)");
  EXPECT_EQ(captured(dp0, 2, 1, 2), "untouched row 2 layer 1");
  EXPECT_EQ(dp1.rows, 4);
  EXPECT_EQ(dp1.row_width, 4);
  EXPECT_EQ(dp1.guard_rows, 2);
  EXPECT_EQ(testing::rows_past_end(dp1), 0);
  EXPECT_EQ(testing::rows_before_start(dp1), 0);
}

TEST(GpuPipeline, ReplayKernelWritesEveryGatheredRowAsExpertIds) {
  const Case c = small_case(2, 1, false, 4, {2, 3}, Path::gathered, /*monolithic=*/true);
  const ConcreteOutcome out = run(*gpu(), c);
  ASSERT_TRUE(out.allocation.replay_rows.has_value());
  EXPECT_EQ(*out.allocation.replay_rows, 8);  // vllm-50874: M * D without EP
  const std::vector<RowId> gathered = {{RowKind::token, 0, 0}, {RowKind::token, 0, 1}, {RowKind::token, 1, 0},
                                       {RowKind::token, 1, 1}, {RowKind::token, 1, 2}};
  for (const ConcreteRank& rank : out.ranks) {
    ASSERT_TRUE(rank.replay.has_value());
    const GuardedImage& replay = *rank.replay;
    EXPECT_EQ(replay.bits, 16);
    EXPECT_EQ(replay.rows, 8);
    for (size_t row = 0; row < gathered.size(); ++row)
      for (int k = 0; k < 2; ++k)
        EXPECT_EQ(testing::row_of(replay, static_cast<int64_t>(row))[static_cast<size_t>(k)],
                  replay_value(routing_value(gathered[row], k), 64))
            << "row " << row << " k " << k;
    for (int64_t row = 5; row < 8; ++row) EXPECT_EQ(testing::row_of(replay, row), (std::vector<int32_t>{-1, -1}));
    EXPECT_EQ(testing::rows_past_end(replay), 0);
  }
}

TEST(GpuPipeline, SpGatheredShardsTakeTheDpMajorOffsetOfEachRank) {
  // s = [2, 1]: gathered = (0,0) (0,1) | (0,2) pad | (1,0) | pad; dp 1 starts at row 4.
  const Case c = small_case(2, 2, true, 4, {3, 1}, Path::gathered);
  const ConcreteOutcome out = run(*gpu(), c);
  for (const ConcreteRank& rank : out.ranks) EXPECT_EQ(rank.calls.at(0).branch, branch::gathered_shards);
  EXPECT_EQ(out.ranks[2].calls[0].copies.at(0).src_row, 4);
  for (int tp = 0; tp < 2; ++tp) {
    const GuardedImage& dp0 = out.ranks[static_cast<size_t>(tp)].capture;
    EXPECT_EQ(captured(dp0, 0, 1, 2), "token (0, 0)");
    EXPECT_EQ(captured(dp0, 2, 1, 2), "token (0, 2)");
    EXPECT_EQ(captured(dp0, 3, 1, 2), "untouched row 3 layer 1");
    EXPECT_EQ(captured(out.ranks[static_cast<size_t>(2 + tp)].capture, 0, 1, 2), "token (1, 0)");
    EXPECT_EQ(captured(out.ranks[static_cast<size_t>(2 + tp)].capture, 1, 1, 2), "untouched row 1 layer 1");
  }
}

TEST(GpuPipeline, SpShardRanksAllGatherTheirTpGroupBeforeCapture) {
  // tokens [3, 2], T = 2: (0, 1) holds (0,2) + padding; branch sp_allgather copies [0, 3).
  const Case c = small_case(2, 2, true, 4, {3, 2}, Path::sp_shard);
  const ConcreteOutcome out = run(*gpu(), c);
  const CaptureDecision& d01 = out.ranks[1].calls.at(0);
  EXPECT_EQ(d01.branch, branch::sp_allgather);
  ASSERT_EQ(d01.copies.size(), 1u);
  EXPECT_TRUE(d01.copies[0].from_tp_gather);
  for (int64_t row = 0; row < 3; ++row)
    EXPECT_EQ(captured(out.ranks[1].capture, row, 1, 2), "token (0, " + std::to_string(row) + ")");
  EXPECT_EQ(captured(out.ranks[3].capture, 1, 1, 2), "token (1, 1)");
}

TEST(GpuPipeline, OneRowShardTakesTheLocalBranchAndTpRankOneCapturesPadding) {
  // corner case 2 (docs/layout-contract.md section 8): n_d = 1 with SP; TP rank 1's one-row shard is padding.
  const Case c = small_case(2, 2, true, 4, {1, 1}, Path::sp_shard);
  const ConcreteOutcome out = run(*gpu(), c);
  EXPECT_EQ(out.ranks[1].calls.at(0).branch, branch::local);
  EXPECT_EQ(captured(out.ranks[0].capture, 0, 1, 2), "token (0, 0)");
  EXPECT_EQ(captured(out.ranks[1].capture, 0, 1, 2), "SP padding row 1 of dp 0");
}

TEST(GpuPipeline, DeviceOffsetsSelectionReadsTheScannedShardOffset) {
  const Case c = small_case(2, 2, true, 4, {3, 1}, Path::gathered);
  const ConcreteOutcome host = run(*gpu(), c);
  const ConcreteOutcome device = run(*gpu(Fault::none, "vllm-50874", Selection::device_offsets), c);
  for (size_t r = 0; r < host.ranks.size(); ++r) EXPECT_EQ(device.ranks[r].capture.data, host.ranks[r].capture.data);
}

TEST(GpuPipeline, RejectionsLeaveTheBufferUntouched) {
  // cudagraph bucket 8 above M = 4: vLLM raises (capture buffer of 4 rows, 8 to write).
  Case c = small_case(2, 1, false, 4, {3, 1}, Path::local);
  c.padding = {PaddingMode::cudagraph, {8}};
  const ConcreteOutcome out = run(*gpu(), c);
  EXPECT_TRUE(out.ranks[0].calls.at(0).rejected);
  EXPECT_EQ(out.ranks[0].calls[0].error, "capture buffer holds 4 rows, 8 to write");
  EXPECT_EQ(captured(out.ranks[0].capture, 0, 1, 2), "untouched row 0 layer 1");
}

TEST(GpuPipeline, R3FixedPolicyWritesEachMicroBatchAtItsOffset) {
  Case c = small_case(2, 1, false, 8, {5, 3}, Path::local);
  c.padding = {PaddingMode::dp_max, {}};
  c.microbatches = 2;  // P = 5: micro-batches [0, 2) and [2, 5)
  const ConcreteOutcome fixed = run(*gpu(Fault::none, "r3-fixed"), c);
  for (int64_t row = 0; row < 5; ++row)
    EXPECT_EQ(captured(fixed.ranks[1].capture, row, 1, 2), "token (1, " + std::to_string(row) + ")");
  // vllm-50874 writes both at row 0: the second (3 rows) overwrites the first.
  const ConcreteOutcome vllm = run(*gpu(), c);
  EXPECT_EQ(captured(vllm.ranks[1].capture, 0, 1, 2), "token (1, 2)");
  EXPECT_EQ(captured(vllm.ranks[1].capture, 3, 1, 2), "untouched row 3 layer 1");
}

TEST(GpuImplementationFactory, NamesCarryTheFault) {
  EXPECT_EQ(gpu()->name(), "gpu");
  EXPECT_EQ(gpu(Fault::no_trim)->name(), "gpu+no-trim");
  EXPECT_EQ(gpu()->policy(), nullptr);
}

TEST(GpuImplementationFactory, PlainGpuFollowsTheDefaultEnginesFirstReleasedPolicy) {
  EXPECT_EQ(default_gpu_policy(), "vllm-50874");
  EXPECT_EQ(GpuOptions{}.policy, default_gpu_policy());
  EXPECT_EQ(gpu(Fault::none, "vllm-50874")->name(), "gpu");
  EXPECT_EQ(gpu(Fault::none, "r3-fixed")->name(), "gpu:r3-fixed");
}

TEST(GpuImplementationFactory, UnknownPolicyIsAnErrorListingTheValidOnes) {
  auto made = make_gpu_implementation({Backend::host, Selection::host_decision, "vllm-9", Fault::none});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().message, "unknown gpu policy 'vllm-9'; valid policies: vllm-50874, vllm-pre-50874, r3-fixed, sglang, sglang-miles, sglang-fixed, trtllm, trtllm-06a976ce, trtllm-fixed, ascend, ascend-0.26, ascend-fixed");
}

#if !defined(R3FUZZ_TEST_HAS_CUDA)
TEST(GpuImplementationFactory, CudaBackendsNeedTheCudaBuild) {
  for (Backend b : {Backend::virtual_, Backend::nccl}) {
    auto made = make_gpu_implementation({b, Selection::host_decision, "vllm-50874", Fault::none});
    ASSERT_FALSE(made.ok());
    EXPECT_EQ(made.error().message, "gpu backend " + std::string(to_string(b)) +
                                        " needs the CUDA build of r3fuzz (configure with -DR3FUZZ_CUDA=ON, or the "
                                        "'cuda' preset); this build has only backend host");
  }
}
#endif

TEST(GpuImplementationFactory, CasesTooLargeForProvenanceAreErrors) {
  Case c = small_case(2, 1, false, 40000, {1, 1}, Path::local);
  const Step step = testing::step_of(c);
  auto out = gpu()->run_concrete(c, step);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("too large for provenance values"), std::string::npos) << out.error().message;
}

}  // namespace
}  // namespace r3::gpu
