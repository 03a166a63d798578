// FindingGrouper: one finding per root cause. The campaign's canonical hook (the shrinker with
// path changes allowed) is exercised end to end in tests/cli/run_replay_test.cpp; here the
// cases are already minimal, so the identity hook shows the grouping rule itself.
#include "fuzz/campaign/grouping.hpp"

#include <gtest/gtest.h>

#include "fuzz/implementations/registry.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/layout.hpp"
#include "tests/support/case_fixtures.hpp"
#include "tests/support/sglang_fixtures.hpp"

namespace r3 {
namespace {

using V = std::vector<int64_t>;

std::unique_ptr<Implementation> impl(const std::string& name) { return make_implementation(name, {}).value(); }

Judgement judged(const Implementation& i, const Case& c) {
  return judge_case(i, c, derive_step(c).value(), JudgeMode::concrete);
}

Case vllm_case(Topology t, int64_t M, V tokens, Path path) {
  Case c = test::make_case(t, M, std::move(tokens), path);
  c.idle_dummy = true;
  return c;
}

// Section 9.1's micro-batch overwrite, reachable in vLLM: EP, every rank votes yes.
Case overwrite_case(Path path) {
  const bool sp = path == Path::sp_shard;
  Case c = vllm_case({2, sp ? 2 : 1, true, sp}, 4, {4, 4}, path);
  c.padding = {PaddingMode::dp_max, {}};
  c.microbatches = 2;
  return c;
}

class Grouping : public ::testing::Test {
 protected:
  FindingGrouper::Placement place(const Implementation& i, const Case& c) {
    const Judgement j = judged(i, c);
    EXPECT_TRUE(j.failed()) << i.name();
    return grouper_.place(next_++, i, j, c);
  }

  FindingGrouper grouper_{Mode::mixed, kDefaultProfile, nullptr};
  size_t next_ = 0;
  const std::unique_ptr<Implementation> vllm_ = impl("vllm-50874");
  const std::unique_ptr<Implementation> pre_ = impl("vllm-pre-50874");
  const std::unique_ptr<Implementation> gpu_ = impl("gpu");
};

TEST_F(Grouping, TheGpuPipelineSharesTheFindingsOfThePolicyItFollows) {
  const auto first = place(*vllm_, overwrite_case(Path::local));
  EXPECT_TRUE(first.created);
  // On another path gpu's own case differs, yet it fails identically on the finding's reproducer.
  const auto other_path = place(*gpu_, overwrite_case(Path::sp_shard));
  EXPECT_FALSE(other_path.created);
  EXPECT_EQ(other_path.finding, first.finding);
  const auto same_case = place(*gpu_, overwrite_case(Path::local));
  EXPECT_FALSE(same_case.created);
  EXPECT_EQ(same_case.finding, first.finding);
  // vllm-50874's own failure on the SP case is the case gpu's joined with: the same finding.
  EXPECT_EQ(place(*vllm_, overwrite_case(Path::sp_shard)).finding, first.finding);
  // An implementation already in a finding does not join it by failing on its reproducer: that
  // would fold each of its bugs of one verdict into the first. Without the canonical hook, a
  // case that reduces elsewhere is a finding of its own.
  Case wider = overwrite_case(Path::local);
  wider.tokens = {3, 3};
  EXPECT_TRUE(place(*vllm_, wider).created);
  ASSERT_EQ(grouper_.findings().size(), 2u);
  const Finding& f = grouper_.findings()[0];
  EXPECT_EQ(f.implementations, (std::vector<std::string>{"vllm-50874", "gpu"}));
  EXPECT_EQ(f.failures, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(f.verdict, Verdict::wrong_rows);
  EXPECT_EQ(f.severity, Severity::failure);
  EXPECT_EQ(f.profile, kDefaultProfile);
  EXPECT_EQ(f.reproducer, overwrite_case(Path::local));
  EXPECT_EQ(f.detail, "buffer row 0 of dp 0 tp 0 holds token (0, 2), expected token (0, 0)");
}

TEST_F(Grouping, DistinctBugsStayDistinct) {
  // vllm-50874: the latent one-row SP shard is not the micro-batch overwrite.
  place(*vllm_, overwrite_case(Path::local));
  const auto latent = place(*vllm_, vllm_case({2, 2, true, true}, 1, {1, 0}, Path::sp_shard));
  EXPECT_TRUE(latent.created);
  // vllm-pre-50874: the undersized replay buffer is not the rejection of padded SP shards.
  Case capacity = vllm_case({2, 1, false, false}, 1, {1, 0}, Path::gathered);
  capacity.monolithic = true;
  EXPECT_TRUE(place(*pre_, capacity).created);
  EXPECT_TRUE(place(*pre_, vllm_case({2, 2, true, true}, 1, {1, 0}, Path::gathered)).created);
  ASSERT_EQ(grouper_.findings().size(), 4u);
  EXPECT_EQ(grouper_.findings()[1].severity, Severity::latent);
  EXPECT_EQ(grouper_.findings()[2].verdict, Verdict::capacity);
  EXPECT_EQ(grouper_.findings()[3].verdict, Verdict::spurious_reject);
}

TEST_F(Grouping, TheCanonicalHookDecidesWhichFailuresShareACase) {
  // A hook that maps every case to one fixed case: failures with the same verdict and severity
  // that reduce to the same case are one finding.
  const Case canonical = overwrite_case(Path::local);
  FindingGrouper grouper(Mode::mixed, kDefaultProfile,
                         [&](const Case&, const Implementation&, const Signature&) { return canonical; });
  const Case bigger = overwrite_case(Path::sp_shard);
  const auto a = grouper.place(0, *vllm_, judged(*vllm_, bigger), bigger);
  const auto b = grouper.place(1, *vllm_, judged(*vllm_, canonical), canonical);
  EXPECT_TRUE(a.created);
  EXPECT_EQ(b.finding, a.finding);
  EXPECT_EQ(grouper.findings()[0].reproducer, canonical);
}

// --- SGLang: the model names the patch that repairs each failure (fuzz/oracle/root_cause.hpp) --

class SglangGrouping : public ::testing::Test {
 protected:
  FindingGrouper::Placement place(const Case& c) {
    const Judgement j = judged(*sglang_, c);
    EXPECT_TRUE(j.failed());
    return grouper_.place(next_++, *sglang_, j, c);
  }

  static Case tbo_case() {
    Case c = test::sglang_extend(2, 1, {4, 2});
    sglang::forward_of(c)->tbo = true;
    return c;
  }
  // Upstream both overflows here and, with the buffer sized, reads dp 1 at r * bs: two patches repair it.
  static Case verify_capacity_case() {
    Case c = test::sglang_verify(2, 1, {4, 4}, 2);
    sglang::forward_of(c)->chunked_prefill_size = 4;
    sglang::forward_of(c)->cuda_graph = sglang::CudaGraphs{{4}, {}};
    return c;
  }

  FindingGrouper grouper_{Mode::mixed, Profile::of(sglang::engine(), 0), nullptr};
  size_t next_ = 0;
  const std::unique_ptr<Implementation> sglang_ = impl("sglang");
};

TEST_F(SglangGrouping, ATboFailureIsTheTboOffsetsFinding) {
  EXPECT_TRUE(place(tbo_case()).created);
  ASSERT_EQ(grouper_.findings().size(), 1u);
  const Finding& f = grouper_.findings()[0];
  EXPECT_EQ(f.cause, "tbo-offsets");
  EXPECT_EQ(f.verdict, Verdict::wrong_rows);
  EXPECT_EQ(f.severity, Severity::failure);
  EXPECT_EQ(f.profile, Profile::of(sglang::engine(), 0));
  EXPECT_EQ(f.implementations, (std::vector<std::string>{"sglang"}));
  // Another TBO layout, another verdict or not, is the same bug.
  Case other = tbo_case();
  other.tokens = {4, 4};
  const auto again = place(other);
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.finding, 0u);
  EXPECT_EQ(grouper_.findings()[0].failures, (std::vector<size_t>{0, 1}));
}

TEST_F(SglangGrouping, ACombinedCauseJoinsTheFirstPatchsFindingWhichItsOwnFailureTakesOver) {
  const auto combined = place(verify_capacity_case());
  EXPECT_TRUE(combined.created);
  EXPECT_EQ(grouper_.findings()[0].cause, "window-token-bucket+buffer-rows");
  EXPECT_EQ(grouper_.findings()[0].verdict, Verdict::capacity);
  // The token-bucket window alone takes the finding over: its reproducer shows that bug by itself.
  const auto alone = place(test::sglang_issue_example());
  EXPECT_FALSE(alone.created);
  EXPECT_TRUE(alone.reproducer_changed);
  EXPECT_EQ(alone.finding, combined.finding);
  ASSERT_EQ(grouper_.findings().size(), 1u);
  const Finding& f = grouper_.findings()[0];
  EXPECT_EQ(f.cause, "window-token-bucket");
  EXPECT_EQ(f.verdict, Verdict::wrong_rows);
  EXPECT_EQ(f.reproducer, test::sglang_issue_example());
  EXPECT_EQ(f.failures, (std::vector<size_t>{0, 1}));
  // A later combined failure joins without taking it back.
  const auto later = place(verify_capacity_case());
  EXPECT_FALSE(later.reproducer_changed);
  EXPECT_EQ(grouper_.findings()[0].cause, "window-token-bucket");
}

TEST_F(SglangGrouping, ALatentFindingIsTakenOverByAFailureOfTheSameCause) {
  // nixl without DP attention: only TP ranks > 0 publish padding rows (latent).
  const Case latent = test::sglang_extend(1, 4, {1}, sglang::A2a::nixl);
  EXPECT_TRUE(place(latent).created);
  EXPECT_EQ(grouper_.findings()[0].severity, Severity::latent);
  EXPECT_EQ(grouper_.findings()[0].cause, "gather-scattered");
  // mooncake under DP attention: TP rank 0's window misses the slices too, a failure.
  const Case failure = test::sglang_extend(2, 2, {3, 1}, sglang::A2a::mooncake);
  const auto taken = place(failure);
  EXPECT_FALSE(taken.created);
  EXPECT_TRUE(taken.reproducer_changed);
  ASSERT_EQ(grouper_.findings().size(), 1u);
  const Finding& f = grouper_.findings()[0];
  EXPECT_EQ(f.severity, Severity::failure);
  EXPECT_EQ(f.reproducer, failure);
  EXPECT_EQ(f.cause, "gather-scattered");
  // A latent one afterwards does not demote it.
  EXPECT_FALSE(place(latent).reproducer_changed);
  EXPECT_EQ(grouper_.findings()[0].severity, Severity::failure);
}

TEST_F(SglangGrouping, DifferentCausesAreDifferentFindings) {
  place(tbo_case());
  place(test::sglang_issue_example());
  place(test::sglang_extend(1, 4, {1}, sglang::A2a::nixl));
  ASSERT_EQ(grouper_.findings().size(), 3u);
  EXPECT_EQ(grouper_.findings()[1].cause, "window-token-bucket");
  EXPECT_EQ(grouper_.findings()[2].cause, "gather-scattered");
}

}  // namespace
}  // namespace r3
