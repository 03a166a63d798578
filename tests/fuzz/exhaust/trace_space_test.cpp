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

TEST(TraceSpace, BoundsBeyondTheSpaceAreRefused) {
  TraceSpaceBounds bounds;
  bounds.max_requests = 4;
  const auto r = exhaust_traces(make_trace_implementation("r3-fixed").value(), parse_profile("vllm").value(), bounds);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "--max-requests: 4 is outside [1, 3] (the space grows too fast beyond)");
}

}  // namespace
}  // namespace r3
