// TensorRT-LLM's per-step models (reference/engines/trtllm/policy.cpp, profile.cpp) and the
// one-step case of a trace step (lifecycle_step_case.cpp).
#include <gtest/gtest.h>

#include "reference/engines/trtllm/model.hpp"
#include "reference/engines/trtllm/policy.hpp"
#include "reference/profile.hpp"
#include "tests/reference/engines/trtllm/lifecycle_fixtures.hpp"

namespace r3 {
namespace {

using namespace test::trtllm_trace;

CaptureCall call(int64_t rows, int64_t offset, int layer = 0) {
  CaptureCall c;
  c.rows = rows;
  c.row_offset = offset;
  c.layer = layer;
  c.capture_buffer = {8, 2, 2};
  return c;
}

std::vector<Copy> copies(const CapturePolicy& p, const CaptureCall& c) {
  CaptureDecision d;
  p.decide(c, d);
  EXPECT_FALSE(d.rejected);
  return d.copies;
}

TEST(TrtllmPolicy, ThePoliciesAreRegisteredForTheEngine) {
  const auto& m = trtllm::model();
  EXPECT_EQ(m.name(), "trtllm");
  EXPECT_EQ(m.released_policies(), (std::vector<std::string_view>{"trtllm", "trtllm-06a976ce"}));
  EXPECT_EQ(m.fixed_policy(), "trtllm-fixed");
  for (std::string_view name : {"trtllm-06a976ce", "trtllm", "trtllm-fixed"}) {
    auto p = make_policy(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->engine(), trtllm::engine());
  }
}

// RouteCapture._capture: one call writes its rows at row 0; a chunk of a multi-chunk MoE call at
// its row offset in L and the fix, at row 0 in E; rows past the buffer are clamped; an unknown
// layer is skipped.
TEST(TrtllmPolicy, RowsAndChunkOffsets) {
  auto e = trtllm::make_policy_e();
  auto l = trtllm::make_policy_l();
  EXPECT_EQ(copies(*l, call(5, 0)), (std::vector<Copy>{{0, 0, 5, false}}));
  EXPECT_EQ(copies(*e, call(3, 4)), (std::vector<Copy>{{0, 0, 3, false}}));
  EXPECT_EQ(copies(*l, call(3, 4)), (std::vector<Copy>{{4, 0, 3, false}}));
  EXPECT_EQ(copies(*l, call(6, 4)), (std::vector<Copy>{{4, 0, 4, false}}));
  EXPECT_TRUE(copies(*l, call(3, 0, 2)).empty());
}

TEST(TrtllmPolicy, ProfileKeepsOneRankAndOneCall) {
  Case c;
  c.engine = trtllm::engine();
  c.model = {1, 2, 16};
  c.max_num_tokens = 8;
  c.tokens = {3};
  EXPECT_TRUE(trtllm::model().check_profile(c, profile()).ok());
  c.topology.dp = 2;
  c.tokens = {3, 3};
  EXPECT_EQ(trtllm::model().check_profile(c, profile()).error().message,
            "topology.dp: 2 DP ranks: attention DP's per-step layout is not modelled (profile trtllm models the "
            "single-rank MoE call of route_capture.py, RouteCapture._capture @ 06a976ce and aa94b01)");
  const Case fitted = trtllm::model().fit_to_profile(c, profile());
  EXPECT_EQ(fitted.topology.dp, 1);
  EXPECT_EQ(fitted.tokens, (std::vector<int64_t>{3}));
  EXPECT_TRUE(trtllm::model().check_profile(fitted, profile()).ok());
}

TEST(TrtllmPolicy, StepCasePadsDecodeStepsToAGraphSize) {
  Trace t = trtllm_trace({request(0, {1, 2}, {3, 4}), request(1, {5}, {6, 7})},
                         {{{}, {extend(0, 0, 2), extend(1, 0, 1)}}, {{}, {decode(0, 2), decode(1, 1)}}});
  t.config.cuda_graph_decode = {1, 4, 16};
  const Timeline timeline = timeline_of(t);
  const auto prefill = model().step_case(t, timeline, 0);
  ASSERT_TRUE(prefill.has_value());
  EXPECT_EQ(prefill->tokens, (std::vector<int64_t>{3}));
  EXPECT_EQ(prefill->padding.mode, PaddingMode::none);
  const auto decode_step = model().step_case(t, timeline, 1);
  ASSERT_TRUE(decode_step.has_value());
  EXPECT_EQ(decode_step->tokens, (std::vector<int64_t>{2}));
  EXPECT_EQ(decode_step->padding.mode, PaddingMode::cudagraph);
  EXPECT_EQ(decode_step->padding.cudagraph_sizes, (std::vector<int64_t>{1, 4}));
}

}  // namespace
}  // namespace r3
