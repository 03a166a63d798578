// vllm-ascend's faults (reference/engines/ascend/faults.cpp): each mismatches one rank's slot in
// the branch-5 TP all-gather, which the carrier then raises on; both apply to Ascend only.
#include "reference/engines/ascend/faults.hpp"

#include <gtest/gtest.h>

#include "reference/engines/ascend/layout.hpp"
#include "reference/engines/ascend/policy.hpp"
#include "tests/support/ascend_fixtures.hpp"

namespace r3::ascend {
namespace {

CaptureDecision faulty(Fault f, const Case& c, int dp, int tp) {
  const Result<Step> s = ascend::derive_step(c);
  EXPECT_TRUE(s.ok());
  const auto fixed = make_policy(Version::fixed);
  const BufferShape shape{c.max_num_tokens, c.model.layers, c.model.top_k};
  CaptureDecision out;
  decide_with_fault(*fixed, f, capture_call_for(*s, s->calls.front(), s->calls.front().view(dp, tp), shape), out);
  return out;
}

TEST(AscendFault, AlltoallFloorFirstGivesTpZeroAShortSlot) {
  Case c = test::ascend_case(1, 2, true, false, {5});
  fields_of(c)->lora = true;
  EXPECT_EQ(faulty(ascend::kAlltoallFloorFirst, c, 0, 0).error,
            "collective: TP rank 0 sends 3 rows into an all_gather slot of 2 (alltoall-floor-first)");
  EXPECT_EQ(faulty(ascend::kAlltoallFloorFirst, c, 0, 1).error,
            "collective: TP rank 1 sends 2 rows into an all_gather slot of 3 (alltoall-floor-first)");
  EXPECT_FALSE(faulty(ascend::kMc2OwnCount, c, 0, 0).rejected);  // not MC2
}

TEST(AscendFault, Mc2OwnCountMissesThePaddingToTheLargest) {
  const Case c = test::ascend_case(2, 2, true, false, {3, 1});  // no SP (v0.26): every rank holds ceil(3/2)
  EXPECT_FALSE(faulty(ascend::kMc2OwnCount, c, 0, 0).rejected);
  EXPECT_EQ(faulty(ascend::kMc2OwnCount, c, 1, 0).error,
            "collective: TP rank 0 sends 2 rows into an all_gather slot of 1 (mc2-own-count)");
}

TEST(AscendFault, OnlyAscendHasThem) {
  EXPECT_TRUE(fault_applies(ascend::kMc2OwnCount, engine()));
  EXPECT_FALSE(fault_applies(Fault::no_trim, engine()));
}

}  // namespace
}  // namespace r3::ascend
