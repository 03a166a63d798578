// SGLang's steps on the pipeline, row by row: the DP gather (MAX_LEN all_gather segments,
// SUM_LEN concatenation, decode/verify-graph segments), DeepEP's attn-TP gather and another
// a2a backend's slice, TBO's two capture calls, idle ranks, and a capture larger than the
// buffer caught by the guards. Rows are read off the image the judge reads (the published rows).
#include <gtest/gtest.h>

#include "tests/support/sglang_fixtures.hpp"

#include "fuzz/oracle/judge.hpp"
#include "reference/engines/sglang/faults.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace r3::gpu {
namespace {

using sglang::A2a;
using sglang::ForwardKind;
using testing::captured;
using testing::gpu;
using testing::rows_past_end;
using testing::run;

// L = 2, K = 2, E = 64, layer 1; buffer rows R = max(cps, mrr) * dp with cps 16, mrr 4.
Case sglang_case(int dp, int tp, A2a a2a, ForwardKind kind, std::vector<int64_t> counts) {
  return test::sglang_case(dp, tp, a2a, kind, std::move(counts), {2, 2, 64}, 1);
}

Case with_graph(Case c, std::vector<int64_t> decode, std::optional<int64_t> last, int64_t w = 1) {
  sglang::forward_of(c)->cuda_graph = sglang::CudaGraphs{std::move(decode), {}};
  sglang::forward_of(c)->last_decode_bucket = last;
  if (w > 1) sglang::forward_of(c)->spec_width = w;
  return c;
}

// Published rows [0, rows) of (dp, tp) at the case's layer, as text.
std::vector<std::string> rows_of(const ConcreteOutcome& out, const Case& c, int dp, int tp, int64_t rows) {
  std::vector<std::string> text;
  const GuardedImage& img = out.ranks[static_cast<size_t>(dp * c.topology.tp + tp)].capture;
  for (int64_t r = 0; r < rows; ++r) text.push_back(captured(img, r, c.layer, c.model.top_k));
  return text;
}

std::string untouched(int64_t row) { return "untouched row " + std::to_string(row) + " layer 1"; }

Verdict verdict_of(const Case& c, const ConcreteOutcome& out) {
  return judge_concrete(c, testing::step_of(c), out, "gpu:sglang").verdict;
}

TEST(GpuSglang, MaxLenGatherPlacesEachRankAtItsEqualSegment) {
  // Decode [2, 1] with attn_tp 2: a = [2, 2], MAX_LEN (2 * 4 >= 2 * 2): segments of 2, gathered as
  // four attn-TP slices of 1 row in rank order d * 2 + t. dp 1's window starts at 2.
  const Case c = sglang_case(2, 2, A2a::none, ForwardKind::decode, {2, 1});
  for (const std::string policy : {"sglang", "sglang-fixed"}) {
    const ConcreteOutcome out = run(*gpu(Fault::none, policy), c);
    EXPECT_EQ(rows_of(out, c, 0, 1, 3), (std::vector<std::string>{"token (0, 0)", "token (0, 1)", untouched(2)}));
    EXPECT_EQ(rows_of(out, c, 1, 0, 2), (std::vector<std::string>{"token (1, 0)", untouched(1)}));
    EXPECT_EQ(verdict_of(c, out), Verdict::pass);
  }
  // tp-major-order: group rank (d, t) at t * 2 + d, so the gathered rows are (0,0) (1,0) (0,1) (1,1).
  const ConcreteOutcome wrong = run(*gpu(Fault::tp_major_order, "sglang-fixed"), c);
  EXPECT_EQ(rows_of(wrong, c, 0, 0, 2), (std::vector<std::string>{"token (0, 0)", "token (1, 0)"}));
  EXPECT_EQ(rows_of(wrong, c, 1, 0, 1), (std::vector<std::string>{"token (0, 1)"}));
}

TEST(GpuSglang, SumLenGatherConcatenatesAlignedCounts) {
  // Extend [3, 1], attn_tp 2: a = [4, 2], SUM_LEN: dp 1 at row 4 of the concatenation.
  const Case c = sglang_case(2, 2, A2a::none, ForwardKind::extend, {3, 1});
  const ConcreteOutcome out = run(*gpu(Fault::none, "sglang"), c);
  EXPECT_EQ(rows_of(out, c, 0, 0, 4), (std::vector<std::string>{"token (0, 0)", "token (0, 1)", "token (0, 2)", untouched(3)}));
  EXPECT_EQ(rows_of(out, c, 1, 1, 2), (std::vector<std::string>{"token (1, 0)", untouched(1)}));
  EXPECT_EQ(verdict_of(c, out), Verdict::pass);
  // no-attn-tp-align: dp 1 looked up at sum(n[:1]) = 3, rank 0's padding row.
  const ConcreteOutcome wrong = run(*gpu(sglang::kNoAttnTpAlign, "sglang-fixed"), c);
  EXPECT_EQ(rows_of(wrong, c, 1, 0, 1), (std::vector<std::string>{"token (0, 3)"}));
  EXPECT_EQ(rows_of(wrong, c, 0, 0, 3), (std::vector<std::string>{"token (0, 0)", "token (0, 1)", "token (0, 2)"}));
}

TEST(GpuSglang, VerifyGraphWindowAtTheRequestBucketReadsTheRankBefore) {
  // The case: verify, requests [2, 1], w 4, buckets [2, 4]: bs = 2, segments of 8 rows.
  // Upstream's window starts dp 1 at r * bs = 2 (requests), inside dp 0's segment.
  const Case c = with_graph(sglang_case(2, 2, A2a::none, ForwardKind::verify, {2, 1}), {2, 4}, 2, 4);
  const ConcreteOutcome upstream = run(*gpu(Fault::none, "sglang"), c);
  EXPECT_EQ(rows_of(upstream, c, 1, 0, 4),
            (std::vector<std::string>{"token (0, 2)", "token (0, 3)", "token (0, 4)", "token (0, 5)"}));
  EXPECT_EQ(verdict_of(c, upstream), Verdict::wrong_rows);
  for (const std::string policy : {"sglang-miles", "sglang-fixed"}) {
    const ConcreteOutcome out = run(*gpu(Fault::none, policy), c);
    EXPECT_EQ(rows_of(out, c, 1, 0, 5),
              (std::vector<std::string>{"token (1, 0)", "token (1, 1)", "token (1, 2)", "token (1, 3)", untouched(4)}));
    EXPECT_EQ(verdict_of(c, out), Verdict::pass);
  }
  // window-request-bucket puts upstream's bug into the fix.
  const ConcreteOutcome faulty = run(*gpu(sglang::kWindowRequestBucket, "sglang-fixed"), c);
  EXPECT_EQ(rows_of(faulty, c, 1, 0, 1), (std::vector<std::string>{"token (0, 2)"}));
}

TEST(GpuSglang, DecodeGraphSegmentsAreTheBucket) {
  // Decode [2, 1], buckets [2, 4], w 1: bs = 2 on both ranks, segments of 2: r * bs is right.
  const Case c = with_graph(sglang_case(2, 1, A2a::none, ForwardKind::decode, {2, 1}), {2, 4}, 2);
  const ConcreteOutcome out = run(*gpu(Fault::none, "sglang"), c);
  EXPECT_EQ(rows_of(out, c, 1, 0, 2), (std::vector<std::string>{"token (1, 0)", untouched(1)}));
  EXPECT_EQ(verdict_of(c, out), Verdict::pass);
}

TEST(GpuSglang, DeepepCaptureAllGathersTheAttnTpSlices) {
  // No DP attention, attn_tp 2, DeepEP, extend [3]: aligned to 4, slices of 2 rows; the
  // capturer's attn-TP gather writes all 4 at row 0, the window [0, 4) publishes the 3 tokens.
  const Case c = sglang_case(1, 2, A2a::deepep, ForwardKind::extend, {3});
  const ConcreteOutcome out = run(*gpu(Fault::none, "sglang"), c);
  for (int t = 0; t < 2; ++t)
    EXPECT_EQ(rows_of(out, c, 0, t, 4),
              (std::vector<std::string>{"token (0, 0)", "token (0, 1)", "token (0, 2)", untouched(3)}));
  EXPECT_EQ(verdict_of(c, out), Verdict::pass);
  // no-attn-tp-gather: each TP rank writes its own slice: tp 1 publishes tokens 2, 3.
  const ConcreteOutcome faulty = run(*gpu(sglang::kNoAttnTpGather, "sglang"), c);
  EXPECT_EQ(rows_of(faulty, c, 0, 0, 3), (std::vector<std::string>{"token (0, 0)", "token (0, 1)", untouched(2)}));
  EXPECT_EQ(rows_of(faulty, c, 0, 1, 2), (std::vector<std::string>{"token (0, 2)", "token (0, 3)"}));
}

TEST(GpuSglang, AnotherA2aBackendWritesItsSliceUngathered) {
  // mooncake, attn_tp 2, extend [3]: each TP rank holds 2 rows and nothing gathers them.
  const Case c = sglang_case(1, 2, A2a::mooncake, ForwardKind::extend, {3});
  const ConcreteOutcome upstream = run(*gpu(Fault::none, "sglang"), c);
  EXPECT_EQ(rows_of(upstream, c, 0, 0, 3), (std::vector<std::string>{"token (0, 0)", "token (0, 1)", untouched(2)}));
  EXPECT_EQ(rows_of(upstream, c, 0, 1, 2), (std::vector<std::string>{"token (0, 2)", "token (0, 3)"}));
  EXPECT_EQ(verdict_of(c, upstream), Verdict::wrong_rows);
  // The fix gathers every scattered backend's slices, as DeepEP's capture does.
  const ConcreteOutcome fixed = run(*gpu(Fault::none, "sglang-fixed"), c);
  EXPECT_EQ(rows_of(fixed, c, 0, 1, 4),
            (std::vector<std::string>{"token (0, 0)", "token (0, 1)", "token (0, 2)", untouched(3)}));
  EXPECT_EQ(verdict_of(c, fixed), Verdict::pass);
}

TEST(GpuSglang, TboWritesBothChildrenAndTheFixPlacesTheSecondAtItsOffset) {
  // DP attention, attn_tp 1, extend [4, 2] with TBO: SUM_LEN, children [2, 1] and [2, 1].
  Case c = sglang_case(2, 1, A2a::none, ForwardKind::extend, {4, 2});
  sglang::forward_of(c)->tbo = true;
  // Upstream: each child at row 0 of a 3-row tensor; dp 1's window starts at 4, beyond both.
  const ConcreteOutcome upstream = run(*gpu(Fault::none, "sglang"), c);
  EXPECT_EQ(rows_of(upstream, c, 1, 0, 2), (std::vector<std::string>{untouched(0), untouched(1)}));
  EXPECT_EQ(verdict_of(c, upstream), Verdict::wrong_rows);
  const ConcreteOutcome fixed = run(*gpu(Fault::none, "sglang-fixed"), c);
  EXPECT_EQ(rows_of(fixed, c, 0, 0, 5), (std::vector<std::string>{"token (0, 0)", "token (0, 1)", "token (0, 2)",
                                                                   "token (0, 3)", untouched(4)}));
  EXPECT_EQ(rows_of(fixed, c, 1, 0, 3), (std::vector<std::string>{"token (1, 0)", "token (1, 1)", untouched(2)}));
  EXPECT_EQ(verdict_of(c, fixed), Verdict::pass);
  // tbo-row0: the second child overwrites the first at row 0.
  const ConcreteOutcome faulty = run(*gpu(sglang::kTboRow0, "sglang-fixed"), c);
  EXPECT_EQ(rows_of(faulty, c, 0, 0, 3), (std::vector<std::string>{"token (0, 2)", "token (0, 3)", untouched(2)}));
  EXPECT_EQ(rows_of(faulty, c, 1, 0, 2), (std::vector<std::string>{"token (1, 1)", untouched(1)}));
}

TEST(GpuSglang, IdleRanksJoinTheGatherAndPublishNothing) {
  // Decode [0, 2], attn_tp 1: MAX_LEN (2 * 2 >= 2 * 2), dp 0 padded to 2 rows it never publishes.
  const Case c = sglang_case(2, 1, A2a::none, ForwardKind::decode, {0, 2});
  const ConcreteOutcome out = run(*gpu(Fault::none, "sglang"), c);
  EXPECT_EQ(rows_of(out, c, 0, 0, 2), (std::vector<std::string>{untouched(0), untouched(1)}));
  EXPECT_EQ(rows_of(out, c, 1, 0, 3), (std::vector<std::string>{"token (1, 0)", "token (1, 1)", untouched(2)}));
  EXPECT_EQ(verdict_of(c, out), Verdict::pass);
}

TEST(GpuSglang, ACaptureLargerThanTheBufferLandsInItsGuards) {
  // Verify [2, 2], w 4, cps 4, mrr 2: R = max(4, 2) * 2 = 8 rows; MAX_LEN writes 2 * 8 = 16.
  Case c = sglang_case(2, 1, A2a::none, ForwardKind::verify, {2, 2});
  sglang::forward_of(c)->spec_width = 4;
  sglang::forward_of(c)->chunked_prefill_size = 4;
  sglang::forward_of(c)->max_running_requests = 2;
  const ConcreteOutcome out = run(*gpu(Fault::none, "sglang"), c);
  EXPECT_EQ(out.allocation.capture_rows, 8);
  for (const ConcreteRank& rank : out.ranks) EXPECT_EQ(rows_past_end(rank.capture), 8);
  // The allocation is known short first: capacity, as the policy model says.
  const Judgement j = judge_concrete(c, testing::step_of(c), out, "gpu:sglang");
  EXPECT_EQ(j.verdict, Verdict::capacity);
  EXPECT_EQ(j.detail, "capture buffer has 8 rows, a capture call writes 16 rows");
}

}  // namespace
}  // namespace r3::gpu
