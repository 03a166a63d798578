#include "fuzz/mutants/fault.hpp"

#include <gtest/gtest.h>

#include "gpu/faults.hpp"

namespace r3 {
namespace {

TEST(Fault, NamesFollowDesignTableAndRoundTrip) {
  std::vector<std::string> names;
  for (Fault f : all_faults()) {
    names.emplace_back(to_string(f));
    EXPECT_EQ(parse_fault(to_string(f)).value(), f);
  }
  const std::vector<std::string> want = {"replay-per-rank", "replay-dp-under-ep", "tp-major-order", "unpadded-offset",
                                         "no-trim",         "floor-sp",           "skip-tp-gather", "last-shard-pad",
                                         "layer-unchecked", "narrow-int16",       "off-by-one-copy", "chunk-row0"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(fault_class(Fault::replay_dp_under_ep), "overflow (needs heavy SP padding)");
}

TEST(Fault, UnknownNameListsTheValidOnes) {
  EXPECT_EQ(parse_fault("tp-major").error().message,
            "fault: \"tp-major\" is not one of replay-per-rank, replay-dp-under-ep, tp-major-order, unpadded-offset, "
            "no-trim, floor-sp, skip-tp-gather, last-shard-pad, layer-unchecked, narrow-int16, off-by-one-copy, "
            "chunk-row0");
}

// The GPU pipeline names its faults itself (gpu/ cannot depend on fuzz/); the carriers pass
// faults to it by name, so the two lists must name the same faults.
TEST(Fault, GpuPipelineKnowsEveryFaultByTheSameName) {
  std::vector<std::string> ours, gpus;
  for (Fault f : all_faults()) ours.emplace_back(to_string(f));
  for (gpu::Fault f : gpu::all_faults()) gpus.emplace_back(gpu::to_string(f));
  std::sort(ours.begin(), ours.end());
  std::sort(gpus.begin(), gpus.end());
  EXPECT_EQ(ours, gpus);
}

}  // namespace
}  // namespace r3
