#include "fuzz/exhaust/trace_space.hpp"

#include <gtest/gtest.h>

#include "tests/support/budget.hpp"

namespace r3 {
namespace {

TraceExhaustResult exhausted(std::string_view impl, std::string_view profile, int steps) {
  TraceSpaceBounds bounds;
  bounds.max_steps = steps;
  return exhaust_traces(make_trace_implementation(impl).value(), parse_profile(profile).value(), bounds).value();
}

TEST(TraceSpace, TheFixedModelsHaveNoDifferenceWithinBounds) {
  // Three steps: about 770,000 valid traces a model, every request shape of the space at least once;
  // under the sanitizers two steps drive the same judging paths in a tenth of the time.
  const int steps = test::budget(3, 2);
  for (const auto& [impl, profile] : {std::pair{"sglang-fixed", "sglang"}, std::pair{"r3-fixed", "vllm"}}) {
    const TraceExhaustResult r = exhausted(impl, profile, steps);
    EXPECT_FALSE(r.counterexample) << impl << ": " << r.detail;
    EXPECT_GT(r.judged, 100) << impl;  // the search really judged the space
    EXPECT_GT(r.visited, r.judged) << impl;
  }
}

TEST(TraceSpace, ItFindsVllmMainsWeightUpdateBug) {
  const TraceExhaustResult r = exhausted("vllm-50874", "vllm", 4);
  ASSERT_TRUE(r.counterexample);
  EXPECT_EQ(r.detail, "wrong_route: request 1 position 0 holds the route of request 1 position 0 at weight version 1, "
                      "expected version 0");
  EXPECT_EQ(r.counterexample->requests.size(), 2u);
}

// Overlap scheduling and every completion order of the copies the engine's window allows.
TraceExhaustResult with_copy_orders(std::string_view impl, std::string_view profile, int steps) {
  TraceSpaceBounds bounds;
  bounds.max_steps = steps;
  bounds.copy_orders = true;
  return exhaust_traces(make_trace_implementation(impl).value(), parse_profile(profile).value(), bounds).value();
}

// (vllm-50874 is not among them: finding L7 shows within three steps in any order.)
TEST(TraceSpace, TheFixedModelsAreCleanUnderEveryCompletionOrder) {
  for (const auto& [impl, profile] : {std::pair{"sglang-fixed", "sglang"}, std::pair{"r3-fixed", "vllm"}}) {
    const TraceExhaustResult r = with_copy_orders(impl, profile, 3);
    EXPECT_FALSE(r.counterexample) << impl << ": " << r.detail;
    EXPECT_GT(r.late_orders, 100) << impl;  // completion orders with a late copy were judged
    EXPECT_GT(r.judged, r.late_orders) << impl;
  }
  // Without copy_orders no late order is judged.
  EXPECT_EQ(exhausted("sglang-fixed", "sglang", 2).late_orders, 0);
}

TEST(TraceSpace, ItFindsSglangUpstreamsCopyRaceOnlyWithCopyOrders) {
  const TraceExhaustResult r = with_copy_orders("sglang", "sglang", 3);
  ASSERT_TRUE(r.counterexample);
  EXPECT_EQ(r.detail, "wrong_route: request 0 position 0 holds the route of request 0 position 1 at weight version 0, "
                      "expected the route of request 0 position 0 at weight version 0");
  EXPECT_FALSE(r.counterexample->copies.empty());
  EXPECT_FALSE(exhausted("sglang", "sglang", 3).counterexample);
}

TEST(TraceSpace, BoundsBeyondTheSpaceAreRefused) {
  TraceSpaceBounds bounds;
  bounds.max_requests = 4;
  const auto r = exhaust_traces(make_trace_implementation("r3-fixed").value(), parse_profile("vllm").value(), bounds);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "--max-requests: 4 is outside [1, 3] (the space grows too fast beyond)");
}

}  // namespace
}  // namespace r3
