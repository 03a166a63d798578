#include "reference/fault.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "reference/capturer.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

TEST(Fault, NamesFollowTheMutantTableAndRoundTrip) {
  std::vector<std::string> names;
  for (Fault f : all_faults()) {
    names.emplace_back(to_string(f));
    EXPECT_EQ(parse_fault(to_string(f)).value(), f);
  }
  const std::vector<std::string> want = {"replay-per-rank", "replay-dp-under-ep", "tp-major-order", "unpadded-offset",
                                         "no-trim",         "floor-sp",           "skip-tp-gather", "last-shard-pad",
                                         "layer-unchecked", "narrow-int16",       "off-by-one-copy", "chunk-row0",
                                         "window-request-bucket", "no-attn-tp-gather", "no-attn-tp-align", "tbo-row0",
                                         "alltoall-floor-first", "mc2-own-count"};
  EXPECT_EQ(names, want);  // the layout faults, then SGLang's and vllm-ascend's own (registry order)
  EXPECT_EQ(fault_class(Fault::replay_dp_under_ep), "overflow (needs heavy SP padding)");
  EXPECT_EQ(fault_description(Fault::off_by_one_copy),
            "every copy of a call moves one row too many (SGLang: every copy the window publishes)");
  EXPECT_EQ(to_string(Fault::none), "none");
}

// An engine's own fault takes its id from its name: no two faults of the table share an id, and
// each id is past the layout faults', so parsing and naming are one-to-one.
TEST(Fault, OwnFaultIdsAreDistinctAndPastTheLayoutFaults) {
  std::set<uint16_t> ids;
  size_t own = 0;
  for (Fault f : all_faults()) {
    EXPECT_TRUE(ids.insert(static_cast<uint16_t>(f)).second) << to_string(f);
    if (static_cast<uint16_t>(f) >= kFirstOwnFault) {
      ++own;
      EXPECT_EQ(own_fault(to_string(f)), f) << to_string(f);
    }
  }
  EXPECT_EQ(own, 6u);
  EXPECT_EQ(to_string(own_fault("not-a-fault")), "none");
}

TEST(Fault, NoneIsNotATableName) {
  EXPECT_EQ(parse_fault("none").error().message,
            "fault: \"none\" is not one of replay-per-rank, replay-dp-under-ep, tp-major-order, unpadded-offset, "
            "no-trim, floor-sp, skip-tp-gather, last-shard-pad, layer-unchecked, narrow-int16, off-by-one-copy, "
            "chunk-row0, window-request-bucket, no-attn-tp-gather, no-attn-tp-align, tbo-row0, alltoall-floor-first, "
            "mc2-own-count");
  EXPECT_FALSE(parse_fault("").ok());
}

TEST(Fault, EachFaultLivesInOneLayer) {
  std::vector<std::string> layers;
  for (Fault f : all_faults()) layers.emplace_back(to_string(fault_layer(f)));
  EXPECT_EQ(layers, (std::vector<std::string>{"allocation", "allocation", "gather", "decision", "decision", "gather",
                                              "gather", "decision", "check", "allocation", "decision", "decision",
                                              "decision", "gather", "decision", "decision", "gather", "gather"}));
}

TEST(Fault, AllocationFaultsChangeOnlyAMonolithicReplayBuffer) {
  Case c;
  c.topology = {2, 2, true, true};
  c.max_num_tokens = 4;
  c.monolithic = true;
  const Allocation base{4, 16, 32};
  auto faulted = [&](Fault f) {
    Allocation a = base;
    apply_allocation_fault(f, c, a);
    return a;
  };
  EXPECT_EQ(faulted(Fault::replay_per_rank).replay_rows, 4);
  EXPECT_EQ(faulted(Fault::replay_dp_under_ep).replay_rows, 8);
  EXPECT_EQ(faulted(Fault::narrow_int16).replay_bits, 16);
  EXPECT_EQ(faulted(Fault::no_trim).replay_rows, 16);
  c.monolithic = false;
  EXPECT_EQ(faulted(Fault::replay_per_rank).replay_rows, 16);
  EXPECT_EQ(faulted(Fault::narrow_int16).replay_bits, 32);
}

TEST(Fault, OffByOneCopyLengthensEveryCopy) {
  CaptureCall call;
  CaptureDecision d;
  d.branch = branch::sp_allgather;
  d.copies = {{0, 0, 2, true}, {2, 2, 1, true}};
  apply_decision_fault(Fault::off_by_one_copy, call, d);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 0, 3, true}, {2, 2, 2, true}}));
}

TEST(Fault, ChunkRow0MovesChunksToRowZeroAndNoFurther) {
  CaptureCall call;
  call.chunk_size = 2;
  call.row_offset = 2;
  CaptureDecision d;
  d.branch = branch::local;
  d.copies = {{2, 0, 2, false}, {0, 0, 1, false}};  // at the chunk's offset, and already at row 0
  apply_decision_fault(Fault::chunk_row0, call, d);
  EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 0, 2, false}, {0, 0, 1, false}}));
}

TEST(Fault, DecisionFaultsLeaveRejectedCallsAndOtherLayersAlone) {
  CaptureCall call;
  CaptureDecision d;
  d.branch = branch::local;
  d.copies = {{0, 0, 2, false}};
  for (Fault f : {Fault::tp_major_order, Fault::floor_sp, Fault::skip_tp_gather, Fault::replay_per_rank,
                  Fault::layer_unchecked, Fault::none}) {
    apply_decision_fault(f, call, d);
    EXPECT_EQ(d.copies, (std::vector<Copy>{{0, 0, 2, false}})) << to_string(f);
  }
  d.reject("no");
  apply_decision_fault(Fault::off_by_one_copy, call, d);
  EXPECT_TRUE(d.copies.empty());
}

}  // namespace
}  // namespace r3
