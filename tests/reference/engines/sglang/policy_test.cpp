// SGLang's three policy models (reference/engines/sglang/policy.cpp; docs/layout-contract.md
// sections 11.5 and 11.6): each window rule with its exact (start, n) and copies per version, the
// texts SGLang raises, the buffer each version sizes, and each patch repairing its bug alone.
#include "reference/engines/sglang/policy.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fuzz/oracle/judge.hpp"
#include "reference/engines/sglang/layout.hpp"
#include "tests/support/sglang_fixtures.hpp"

namespace r3::sglang {
namespace {

using Copies = std::vector<Copy>;

Step step_of(const Case& c) {
  Result<Step> s = sglang::derive_step(c);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : Step{};
}

std::vector<CaptureDecision> decisions(Version version, const Case& c, int dp, int tp = 0) {
  return test::decisions_of(*make_policy(version), c, step_of(c), dp, tp);
}

CaptureDecision last_decision(Version version, const Case& c, int dp, int tp = 0) {
  return decisions(version, c, dp, tp).back();
}

Judgement judged(const CapturePolicy& policy, const Case& c) {
  return judge_symbolic(c, step_of(c), policy, policy.name());
}

Judgement judged(Version version, const Case& c) { return judged(*make_policy(version), c); }

// A prefill-graph extend under DP attention: [3, 1] on attn_tp 2, prefill bucket 8 (a = [4, 4], MAX_LEN).
Case prefill_graph_case() {
  Case c = test::sglang_extend(2, 2, {3, 1});
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{}, {8}};
  return c;
}

// The same with a decode replay of bucket `bs` before it (the runner's bs is then stale).
Case prefill_graph_after_replay(int64_t bs) {
  Case c = prefill_graph_case();
  sglang::forward_of(c)->cuda_graph->decode = {bs};
  sglang::forward_of(c)->last_decode_bucket = bs;
  return c;
}

// TBO extend [4, 2] over dp 2: children [0, 2) + [0, 1), then [2, 4) + [1, 2).
Case tbo_case() {
  Case c = test::sglang_extend(2, 1, {4, 2});
  sglang::forward_of(c)->tbo = true;
  return c;
}

// A verify graph whose bs * w tokens outgrow upstream's buffer: dp 2, [4, 4], w 2, bucket 4,
// cps 4 and mrr 4 (R = 8, the tensor 16 rows).
Case capacity_case() {
  Case c = test::sglang_verify(2, 1, {4, 4}, 2);
  sglang::forward_of(c)->chunked_prefill_size = 4;
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{4}, {}};
  return c;
}

// The same overflow on a plain decode graph (w 1, where the window is right in every version):
// [4, 4] replayed at bucket 8, R = 8, the tensor 16 rows.
Case decode_capacity_case() {
  Case c = test::sglang_decode(2, 1, {4, 4});
  sglang::forward_of(c)->chunked_prefill_size = 4;
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{8}, {}};
  return c;
}

TEST(SglangPolicy, NamesPatchesAndVersions) {
  EXPECT_EQ(make_policy(Version::upstream)->name(), "sglang");
  EXPECT_EQ(make_policy(Version::miles)->name(), "sglang-miles");
  EXPECT_EQ(make_policy(Version::fixed)->name(), "sglang-fixed");
  EXPECT_EQ(make_policy(Version::fixed)->engine(), sglang::engine());
  EXPECT_FALSE(make_policy(Version::fixed)->reads_tp_rank());
  EXPECT_EQ(make_policy(Version::upstream)->patch_names(),
            (std::vector<std::string_view>{"window-token-bucket", "prefill-graph-window", "gather-scattered",
                                           "tbo-offsets", "buffer-rows"}));
  EXPECT_EQ(make_policy(Version::miles)->patch_names(),
            (std::vector<std::string_view>{"prefill-graph-window", "gather-scattered", "tbo-offsets", "buffer-rows"}));
  EXPECT_TRUE(make_policy(Version::fixed)->patch_names().empty());
  std::vector<std::string_view> names;
  for (Patch p : all_patches()) names.push_back(to_string(p));
  EXPECT_EQ(names, make_policy(Version::upstream)->patch_names());
  EXPECT_EQ(patches_of(Version::upstream).count(), 0u);
  EXPECT_EQ(patches_of(Version::miles), Patches{}.set(static_cast<size_t>(Patch::window_token_bucket)));
  EXPECT_EQ(patches_of(Version::fixed).count(), static_cast<size_t>(kPatchCount));
  EXPECT_EQ(describe(Patch::window_token_bucket),
            "model_runner.py passes cuda_graph_batch = bs * captured_req_width (tokens), not bs (requests)");
  const std::string_view unknown[] = {"no-such-patch"};
  EXPECT_EQ(make_policy(Version::upstream)->with_patches(unknown), nullptr);
  const auto patched = make_policy(Version::upstream)->with_patches({});
  ASSERT_NE(patched, nullptr);
  EXPECT_EQ(patched->name(), "sglang");
  EXPECT_EQ(patched->patch_names().size(), 5u);
}

TEST(SglangPolicy, VerifyGraphWindowIsRequestBucketUpstreamAndTokenBucketOnMiles) {
  // The issue's example: w 4, bs 2, dp 1's rows at 1 * 2 * 4 = 8 of the gather.
  const Case c = test::sglang_issue_example();
  const CaptureDecision up = last_decision(Version::upstream, c, 1);
  EXPECT_EQ(up.branch, "window_graph");
  EXPECT_EQ(up.window, (Window{2, 4, false}));  // r * bs: rank 0's tokens (0, 2..5)
  EXPECT_EQ(up.copies, (Copies{{0, 2, 4, false}}));
  for (Version v : {Version::miles, Version::fixed}) {
    const CaptureDecision d = last_decision(v, c, 1);
    EXPECT_EQ(d.window, (Window{8, 4, false}));
    EXPECT_EQ(d.copies, (Copies{{0, 8, 4, false}}));
  }
  EXPECT_EQ(last_decision(Version::upstream, c, 0).copies, (Copies{{0, 0, 8, false}}));
  const Judgement j = judged(Version::upstream, c);
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::failure);
  EXPECT_FALSE(judged(Version::miles, c).failed());
  EXPECT_FALSE(judged(Version::fixed, c).failed());
}

TEST(SglangPolicy, PlainDecodeGraphCountsTheSameInRequestsAndTokens) {
  // Decode [3, 1], bucket 4: r * bs = r * bs * 1 = 4 in every version.
  Case c = test::sglang_decode(2, 2, {3, 1});
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{2, 4}, {}};
  for (Version v : {Version::upstream, Version::miles, Version::fixed}) {
    const CaptureDecision d = last_decision(v, c, 1);
    EXPECT_EQ(d.window, (Window{4, 1, false}));
    EXPECT_EQ(d.copies, (Copies{{0, 4, 1, false}}));
    EXPECT_FALSE(judged(v, c).failed());
  }
}

TEST(SglangPolicy, EagerDpWindowStartsAtThePrefixSum) {
  // SUM_LEN extend [3, 1] on attn_tp 2: global_num_tokens_cpu [4, 2], dp 1 at 4.
  const Case c = test::sglang_extend(2, 2, {3, 1});
  for (Version v : {Version::upstream, Version::fixed}) {
    const CaptureDecision d = last_decision(v, c, 1);
    EXPECT_EQ(d.branch, "window_prefix");
    EXPECT_EQ(d.window, (Window{4, 2, false}));
    EXPECT_EQ(d.copies, (Copies{{0, 4, 1, false}}));  // only the real token is published
  }
  // Without DP attention the window is the local batch.
  const CaptureDecision local = last_decision(Version::upstream, test::sglang_extend(1, 2, {3}), 0);
  EXPECT_EQ(local.branch, "window_local");
  EXPECT_EQ(local.window, (Window{0, 3, false}));
  EXPECT_EQ(local.copies, (Copies{{0, 0, 3, false}}));
}

TEST(SglangPolicy, PrefillGraphBeforeAnyDecodeReplayRaisesTypeError) {
  const Case c = prefill_graph_case();
  for (Version v : {Version::upstream, Version::miles}) {
    for (int dp : {0, 1}) {
      const CaptureDecision d = last_decision(v, c, dp);
      EXPECT_TRUE(d.rejected);
      EXPECT_EQ(d.error,
                "TypeError: unsupported operand type(s) for *: 'int' and 'NoneType' (layers/dp_attention.py, "
                "get_dp_local_slice_cpu: dp_rank * cuda_graph_batch before any decode replay set the runner's bs)");
    }
    EXPECT_TRUE(judged(v, c).failed());
  }
  // The fix takes the prefix sums for a prefill graph: MAX_LEN makes them r * max(a) = 4.
  const CaptureDecision fixed = last_decision(Version::fixed, c, 1);
  EXPECT_FALSE(fixed.rejected);
  EXPECT_EQ(fixed.branch, "window_prefix");
  EXPECT_EQ(fixed.window, (Window{4, 4, false}));
  EXPECT_EQ(fixed.copies, (Copies{{0, 4, 1, false}}));
  EXPECT_FALSE(judged(Version::fixed, c).failed());
}

TEST(SglangPolicy, PrefillGraphWithAStaleBucketReadsTheRankBefore) {
  // The last decode replay ran bs 2: upstream and miles start dp 1 at 1 * 2, inside rank 0's segment.
  const Case c = prefill_graph_after_replay(2);
  for (Version v : {Version::upstream, Version::miles}) {
    const CaptureDecision d = last_decision(v, c, 1);
    EXPECT_EQ(d.branch, "window_graph");
    EXPECT_EQ(d.window, (Window{2, 4, false}));
    EXPECT_EQ(d.copies, (Copies{{0, 2, 1, false}}));
    const Judgement j = judged(v, c);
    EXPECT_EQ(j.verdict, Verdict::wrong_rows);
    EXPECT_EQ(j.severity, Severity::failure);
  }
  EXPECT_EQ(last_decision(Version::fixed, c, 1).window, (Window{4, 4, false}));
  EXPECT_FALSE(judged(Version::fixed, c).failed());
}

TEST(SglangPolicy, WindowPastTheBufferRaisesAShapeMismatch) {
  // R = max(4 * 2, 4 * 2) = 8; a stale bs 16 starts dp 1's window at 16: nothing left of the buffer.
  Case c = test::sglang_extend(2, 1, {3, 3});
  sglang::forward_of(c)->chunked_prefill_size = 4;
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{16}, {8}};
  sglang::forward_of(c)->last_decode_bucket = 16;
  EXPECT_EQ(buffer_rows(c, Version::upstream), 8);
  const CaptureDecision d = last_decision(Version::upstream, c, 1);
  EXPECT_TRUE(d.rejected);
  EXPECT_EQ(d.error,
            "RuntimeError: shape mismatch: value tensor of shape [0, 2, 2] cannot be broadcast to indexing result of "
            "shape [3, 2, 2] (state_capturer/base.py, on_forward_end: window [16, 19) of a 8-row buffer)");
  EXPECT_TRUE(judged(Version::upstream, c).failed());
}

TEST(SglangPolicy, OneRowLeftOfTheBufferBroadcastsToEverySlot) {
  // R = 8, tensor [4, 4] (MAX_LEN), a stale bs 7: buffer[7:11] keeps one row, which broadcasts.
  Case c = test::sglang_extend(2, 1, {4, 4});
  sglang::forward_of(c)->chunked_prefill_size = 4;
  sglang::forward_of(c)->cuda_graph = CudaGraphs{{7}, {8}};
  sglang::forward_of(c)->last_decode_bucket = 7;
  const CaptureDecision d = last_decision(Version::upstream, c, 1);
  EXPECT_FALSE(d.rejected);
  EXPECT_EQ(d.window, (Window{7, 4, false}));
  EXPECT_EQ(d.copies, (Copies{{0, 7, 1, false}, {1, 7, 1, false}, {2, 7, 1, false}, {3, 7, 1, false}}));
  const Judgement j = judged(Version::upstream, c);
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::failure);
}

TEST(SglangPolicy, ScatteredBackendWindowMissesTheUngatheredSlices) {
  // mooncake under DP attention, attn_tp 2, extend [3, 1]: each TP rank wrote its slice at row 0,
  // yet the window of dp 1 is the prefix sum 4: nothing it reads was written.
  const Case c = test::sglang_extend(2, 2, {3, 1}, A2a::mooncake);
  const CaptureDecision up = last_decision(Version::upstream, c, 1);
  EXPECT_EQ(up.branch, "window_prefix");
  EXPECT_EQ(up.window, (Window{4, 2, false}));
  EXPECT_TRUE(up.copies.empty());
  EXPECT_EQ(last_decision(Version::upstream, c, 0).copies, (Copies{{0, 0, 2, false}}));
  const Judgement j = judged(Version::upstream, c);
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::failure);
  // gather-scattered: the capture all-gathers the slices and the window is the local batch.
  const CaptureDecision fixed = last_decision(Version::fixed, c, 1);
  EXPECT_EQ(fixed.branch, "window_local");
  EXPECT_EQ(fixed.window, (Window{0, 2, false}));
  EXPECT_EQ(fixed.copies, (Copies{{0, 0, 1, true}}));
  EXPECT_FALSE(judged(Version::fixed, c).failed());
}

TEST(SglangPolicy, ScatteredBackendWithoutDpAttentionIsLatent) {
  // nixl, attn_tp 4, one token: TP rank 0's slice holds it; TP ranks 1..3 publish padding rows.
  const Case c = test::sglang_extend(1, 4, {1}, A2a::nixl);
  EXPECT_EQ(last_decision(Version::upstream, c, 0, 0).copies, (Copies{{0, 0, 1, false}}));
  EXPECT_EQ(last_decision(Version::upstream, c, 0, 1).copies, (Copies{{0, 0, 1, false}}));
  const Judgement j = judged(Version::upstream, c);
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::latent);
  EXPECT_FALSE(judged(Version::fixed, c).failed());
}

TEST(SglangPolicy, DeepepReadsTheAttnTpGatherThroughTheLocalWindow) {
  // DeepEP under DP attention: the window is [0, len(out_cache_loc)) in every version.
  const Case c = test::sglang_extend(2, 2, {3, 1}, A2a::deepep);
  for (Version v : {Version::upstream, Version::miles, Version::fixed}) {
    const CaptureDecision d = last_decision(v, c, 1, 1);
    EXPECT_EQ(d.branch, "window_local");
    EXPECT_EQ(d.window, (Window{0, 2, false}));
    EXPECT_EQ(d.copies, (Copies{{0, 0, 1, true}}));
    EXPECT_FALSE(judged(v, c).failed());
  }
}

TEST(SglangPolicy, BufferRowsOfEachVersion) {
  // Upstream and miles: max(cps * dp, mrr * dp), mrr * dp with chunking off.
  Case c = test::sglang_issue_example();  // cps 16, mrr 4, w 4, buckets [2, 4], attn_tp 2, dp 2
  EXPECT_EQ(buffer_rows(c, Version::upstream), 32);
  EXPECT_EQ(buffer_rows(c, Version::miles), 32);
  EXPECT_EQ(buffer_rows(c, Version::fixed), 32);  // dp * align(max(16, 4 * 4, 4 * 4), 2)
  sglang::forward_of(c)->chunked_prefill_size = -1;
  sglang::forward_of(c)->max_prefill_tokens = 9;
  EXPECT_EQ(buffer_rows(c, Version::upstream), 8);
  EXPECT_EQ(buffer_rows(c, Version::fixed), 2 * 16);  // mrr * w = 16 beats 9
  sglang::forward_of(c)->max_prefill_tokens = 21;
  EXPECT_EQ(buffer_rows(c, Version::fixed), 2 * 22);  // 21 aligned to attn_tp 2
  const Case cap = capacity_case();
  EXPECT_EQ(buffer_rows(cap, Version::upstream), 8);
  EXPECT_EQ(buffer_rows(cap, Version::fixed), 16);  // dp * bucket 4 * w 2
  EXPECT_EQ(make_policy(Version::upstream)->allocate(cap).capture_rows, 8);
  EXPECT_FALSE(make_policy(Version::upstream)->allocate(cap).replay_rows.has_value());
  // A prefill bucket beyond every other size.
  Case p = prefill_graph_case();
  sglang::forward_of(p)->cuda_graph->prefill = {40};
  EXPECT_EQ(buffer_rows(p, Version::fixed), 80);
}

TEST(SglangPolicy, ATensorLargerThanTheBufferRaisesAtCapture) {
  const Case c = capacity_case();
  EXPECT_EQ(step_of(c).capture_rows_needed, 16);
  for (Version v : {Version::upstream, Version::miles}) {
    const CaptureDecision d = last_decision(v, c, 0);
    EXPECT_TRUE(d.rejected);
    EXPECT_EQ(d.error,
              "RuntimeError: The expanded size of the tensor (8) must match the existing size (16) at non-singleton "
              "dimension 0 (state_capturer/base.py, BaseDeviceCache.capture)");
    const Judgement j = judged(v, c);
    EXPECT_EQ(j.verdict, Verdict::capacity);
    EXPECT_EQ(j.severity, Severity::failure);
  }
  EXPECT_FALSE(judged(Version::fixed, c).failed());
}

TEST(SglangPolicy, TboChildrenOverwriteEachOtherAtRowZeroUpstream) {
  const Case c = tbo_case();
  // Upstream: both children written at row 0, one window from the forward's counts after the second.
  const auto up0 = decisions(Version::upstream, c, 0);
  ASSERT_EQ(up0.size(), 2u);
  EXPECT_EQ(up0[0].copies, (Copies{{0, 0, 3, false}}));
  EXPECT_EQ(up0[1].copies, (Copies{{0, 0, 3, false}}));  // rows 0..2: tokens (0, 2), (0, 3), (1, 1)
  EXPECT_EQ(up0[1].window, (Window{0, 4, false}));
  const auto up1 = decisions(Version::upstream, c, 1);
  EXPECT_EQ(up1[1].window, (Window{4, 2, false}));
  EXPECT_TRUE(up1[1].copies.empty());  // the 3-row child tensors never reach row 4
  const Judgement j = judged(Version::upstream, c);
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::failure);
  // tbo-offsets: each child at its rows' offset, read through its own window.
  const auto fixed0 = decisions(Version::fixed, c, 0), fixed1 = decisions(Version::fixed, c, 1);
  EXPECT_EQ(fixed0[0].window, (Window{0, 2, true}));
  EXPECT_EQ(fixed0[0].copies, (Copies{{0, 0, 2, false}}));
  EXPECT_EQ(fixed0[1].copies, (Copies{{2, 0, 2, false}}));
  EXPECT_EQ(fixed1[0].window, (Window{2, 1, true}));
  EXPECT_EQ(fixed1[0].copies, (Copies{{0, 2, 1, false}}));
  EXPECT_EQ(fixed1[1].copies, (Copies{{1, 2, 1, false}}));
  EXPECT_TRUE(writes_at_offset(fixed1[1]));
  EXPECT_FALSE(writes_at_offset(up1[1]));
  EXPECT_FALSE(judged(Version::fixed, c).failed());
}

// Each patch, added alone to upstream, repairs the bug it is named for, and no other patch does.
struct PatchCase {
  std::string_view patch;
  Case c;
};

TEST(SglangPolicy, EachPatchAloneRepairsItsBug) {
  const std::vector<PatchCase> cases = {
      {"window-token-bucket", test::sglang_issue_example()},
      {"prefill-graph-window", prefill_graph_after_replay(2)},
      {"gather-scattered", test::sglang_extend(2, 2, {3, 1}, A2a::mooncake)},
      {"tbo-offsets", tbo_case()},
      {"buffer-rows", decode_capacity_case()},
  };
  const auto upstream = make_policy(Version::upstream);
  for (const PatchCase& pc : cases) {
    ASSERT_TRUE(judged(*upstream, pc.c).failed()) << pc.patch;
    for (std::string_view name : upstream->patch_names()) {
      const auto patched = upstream->with_patches(std::span(&name, 1));
      ASSERT_NE(patched, nullptr);
      EXPECT_EQ(judged(*patched, pc.c).failed(), name != pc.patch) << pc.patch << " patched with " << name;
    }
  }
}

TEST(SglangPolicy, AVerifyOverflowNeedsTheTokenBucketToo) {
  // With the buffer sized, upstream's verify window still starts dp 1 at r * bs = 4, not 8.
  const Case c = capacity_case();
  const auto upstream = make_policy(Version::upstream);
  const std::string_view rows[] = {"buffer-rows"};
  const Judgement alone = judged(*upstream->with_patches(rows), c);
  EXPECT_EQ(alone.verdict, Verdict::wrong_rows);
  const std::string_view both[] = {"window-token-bucket", "buffer-rows"};
  EXPECT_FALSE(judged(*upstream->with_patches(both), c).failed());
  EXPECT_FALSE(judged(*make_policy(Version::miles)->with_patches(rows), c).failed());
}

TEST(SglangPolicy, PatchedBufferRowsFollowThePatchesNotTheVersion) {
  const Case c = capacity_case();
  EXPECT_EQ(buffer_rows(c, Patches{}.set(static_cast<size_t>(Patch::buffer_rows))), 16);
  EXPECT_EQ(buffer_rows(c, Patches{}.set(static_cast<size_t>(Patch::tbo_offsets))), 8);
  const std::string_view rows[] = {"buffer-rows"};
  EXPECT_EQ(make_policy(Version::upstream)->with_patches(rows)->allocate(c).capture_rows, 16);
}

}  // namespace
}  // namespace r3::sglang
