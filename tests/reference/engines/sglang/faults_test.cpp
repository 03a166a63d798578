// SGLang's own faults and the layout faults SGLang's capture can have, on sglang-fixed's
// decisions (reference/engines/sglang/policy.cpp), as both carriers apply them.
#include "reference/engines/sglang/faults.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference/capturer.hpp"
#include "reference/engines/sglang/policy.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/layout.hpp"
#include "tests/support/sglang_fixtures.hpp"

namespace r3 {
namespace {

Case sglang_case(int dp, int tp, sglang::A2a a2a, sglang::ForwardKind kind, std::vector<int64_t> counts) {
  return test::sglang_case(dp, tp, a2a, kind, std::move(counts), {2, 1, 64});
}

// sglang-fixed's decision for (dp, 0) on every call, with `fault` applied as both carriers apply it.
std::vector<CaptureDecision> fixed_decisions(const Case& c, int dp, Fault fault) {
  auto step = derive_step(c);
  EXPECT_TRUE(step.ok()) << (step.ok() ? "" : step.error().message);
  const auto policy = sglang::make_policy(sglang::Version::fixed);
  const BufferShape shape{policy->allocate(c).capture_rows, c.model.layers, c.model.top_k};
  std::vector<CaptureDecision> out;
  for (const Call& call : step->calls) {
    const CaptureCall cc =
        call_under_fault(fault, capture_call_for(*step, call, call.view(dp, 0), shape));
    CaptureDecision& d = out.emplace_back();
    policy->decide(cc, d);
    apply_decision_fault(fault, cc, d);
  }
  return out;
}

TEST(SglangFault, EachFaultFitsTheEnginesWhoseCaptureCanHaveIt) {
  std::vector<std::string> sglang;
  for (Fault f : faults_for(sglang::engine())) sglang.emplace_back(to_string(f));
  EXPECT_EQ(sglang, (std::vector<std::string>{"tp-major-order", "off-by-one-copy", "window-request-bucket",
                                              "no-attn-tp-gather", "no-attn-tp-align", "tbo-row0"}));
  EXPECT_EQ(faults_for(vllm::engine()).size(), 12u);
  EXPECT_FALSE(fault_applies(sglang::kTboRow0, vllm::engine()));
  EXPECT_FALSE(fault_applies(Fault::no_trim, sglang::engine()));
}

TEST(SglangFault, WindowRequestBucketStartsAtTheRequestBucket) {
  // Verify [2, 1], w 4, bs 2: dp 1's rows at r * bs * w = 8 of the graph's gather; the fault reads 2.
  Case c = sglang_case(2, 2, sglang::A2a::none, sglang::ForwardKind::verify, {2, 1});
  sglang::forward_of(c)->spec_width = 4;
  sglang::forward_of(c)->cuda_graph = sglang::CudaGraphs{{2, 4}, {}};
  EXPECT_EQ(fixed_decisions(c, 1, Fault::none).front().copies, (std::vector<Copy>{{0, 8, 4, false}}));
  EXPECT_EQ(fixed_decisions(c, 1, sglang::kWindowRequestBucket).front().copies, (std::vector<Copy>{{0, 2, 4, false}}));
  // A plain decode (w 1) counts the same in requests and tokens: no change.
  sglang::forward_of(c)->kind = sglang::ForwardKind::decode;
  sglang::forward_of(c)->spec_width = 1;
  EXPECT_EQ(fixed_decisions(c, 1, sglang::kWindowRequestBucket).front().copies, (std::vector<Copy>{{0, 2, 1, false}}));
}

TEST(SglangFault, NoAttnTpAlignLooksRowsUpAtRawOffsets) {
  // Extend [3, 1], attn_tp 2: a = [4, 2], SUM_LEN; dp 1 at 4, at 3 under the fault.
  const Case sum = sglang_case(2, 2, sglang::A2a::none, sglang::ForwardKind::extend, {3, 1});
  EXPECT_EQ(fixed_decisions(sum, 1, Fault::none).front().copies, (std::vector<Copy>{{0, 4, 1, false}}));
  EXPECT_EQ(fixed_decisions(sum, 1, sglang::kNoAttnTpAlign).front().copies, (std::vector<Copy>{{0, 3, 1, false}}));
  // Decode [3, 1]: a = [4, 2], MAX_LEN (2 * 6 >= 2 * 4): dp 1 at 1 * 4, at 1 * max(n) = 3 under the fault.
  const Case max = sglang_case(2, 2, sglang::A2a::none, sglang::ForwardKind::decode, {3, 1});
  EXPECT_EQ(fixed_decisions(max, 1, Fault::none).front().copies, (std::vector<Copy>{{0, 4, 1, false}}));
  EXPECT_EQ(fixed_decisions(max, 1, sglang::kNoAttnTpAlign).front().copies, (std::vector<Copy>{{0, 3, 1, false}}));
}

TEST(SglangFault, NoAttnTpGatherWritesTheSliceAlone) {
  // DeepEP, attn_tp 2, extend [3] (a = 4): the fix reads 3 rows of the attn-TP gather; under the
  // fault capture writes its 2-row slice, and the window publishes the 2 rows it holds.
  const Case c = sglang_case(1, 2, sglang::A2a::deepep, sglang::ForwardKind::extend, {3});
  EXPECT_EQ(fixed_decisions(c, 0, Fault::none).front().copies, (std::vector<Copy>{{0, 0, 3, true}}));
  EXPECT_EQ(fixed_decisions(c, 0, sglang::kNoAttnTpGather).front().copies, (std::vector<Copy>{{0, 0, 2, false}}));
}

TEST(SglangFault, TboRow0WritesTheSecondChildAtRowZero) {
  // TBO, extend [4, 2]: dp 0's children are rows [0, 2) and [2, 4); the fault writes both at 0.
  Case c = sglang_case(2, 1, sglang::A2a::none, sglang::ForwardKind::extend, {4, 2});
  sglang::forward_of(c)->tbo = true;
  const auto fine = fixed_decisions(c, 0, Fault::none), faulty = fixed_decisions(c, 0, sglang::kTboRow0);
  EXPECT_EQ(fine.back().copies, (std::vector<Copy>{{2, 0, 2, false}}));
  EXPECT_EQ(faulty.back().copies, (std::vector<Copy>{{0, 0, 2, false}}));
  EXPECT_EQ(faulty.front().copies, fine.front().copies);
}

TEST(SglangFault, TpMajorOrderReordersOnlyMaxLenGathersOverAttnTp) {
  const Case max = sglang_case(2, 2, sglang::A2a::none, sglang::ForwardKind::decode, {2, 1});
  auto step = derive_step(max);
  ASSERT_TRUE(step.ok());
  const CaptureCall cc = capture_call_for(*step, step->calls[0], step->calls[0].view(2), {8, 2, 1});
  EXPECT_EQ(sglang::tp_major_slices(Fault::tp_major_order, cc).reordered, true);
  EXPECT_EQ(sglang::tp_major_slices(Fault::tp_major_order, cc).slice, 1);
  EXPECT_FALSE(sglang::tp_major_slices(Fault::none, cc).reordered);
  const Case sum = sglang_case(2, 2, sglang::A2a::none, sglang::ForwardKind::extend, {3, 1});
  auto sum_step = derive_step(sum);
  ASSERT_TRUE(sum_step.ok());
  EXPECT_FALSE(sglang::tp_major_slices(Fault::tp_major_order,
                                      capture_call_for(*sum_step, sum_step->calls[0], sum_step->calls[0].view(2), {8, 2, 1}))
                   .reordered);
}

}  // namespace
}  // namespace r3
