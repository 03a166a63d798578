// A finding's root cause (fuzz/oracle/root_cause.cpp): the smallest set of a model's patches
// that repairs its failing case, on SGLang's models, whose patches are named.
#include "fuzz/oracle/root_cause.hpp"

#include <gtest/gtest.h>

#include "reference/engines/sglang/policy.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "reference/layout.hpp"
#include "tests/support/sglang_fixtures.hpp"

namespace r3 {
namespace {

std::string cause_of(sglang::Version version, const Case& c) {
  return root_cause(*sglang::make_policy(version), c, derive_step(c).value());
}

Case tbo_case() {
  Case c = test::sglang_extend(2, 1, {4, 2});
  sglang::forward_of(c)->tbo = true;
  return c;
}

// A verify graph of w 2 at bucket 4 over an 8-row buffer: upstream both overflows and, with the
// buffer sized, reads dp 1 at r * bs = 4.
Case verify_capacity_case() {
  Case c = test::sglang_verify(2, 1, {4, 4}, 2);
  sglang::forward_of(c)->chunked_prefill_size = 4;
  sglang::forward_of(c)->cuda_graph = sglang::CudaGraphs{{4}, {}};
  return c;
}

TEST(RootCause, ATboOverwriteIsTboOffsets) {
  EXPECT_EQ(cause_of(sglang::Version::upstream, tbo_case()), "tbo-offsets");
  EXPECT_EQ(cause_of(sglang::Version::miles, tbo_case()), "tbo-offsets");
}

TEST(RootCause, EachVersionNamesWhatItLacks) {
  EXPECT_EQ(cause_of(sglang::Version::upstream, test::sglang_issue_example()), "window-token-bucket");
  EXPECT_EQ(cause_of(sglang::Version::miles, test::sglang_issue_example()), "");  // miles passes it
  EXPECT_EQ(cause_of(sglang::Version::upstream, test::sglang_extend(1, 4, {1}, sglang::A2a::nixl)), "gather-scattered");
}

TEST(RootCause, TwoBugsSeenTogetherJoinInTheModelsOrder) {
  EXPECT_EQ(cause_of(sglang::Version::upstream, verify_capacity_case()), "window-token-bucket+buffer-rows");
  EXPECT_EQ(cause_of(sglang::Version::miles, verify_capacity_case()), "buffer-rows");
}

TEST(RootCause, NothingToNameWithoutAFailureOrPatches) {
  EXPECT_EQ(cause_of(sglang::Version::upstream, test::sglang_extend(2, 2, {3, 1})), "");  // passes
  EXPECT_EQ(cause_of(sglang::Version::fixed, tbo_case()), "");
  // vLLM's models have no patches: no cause, even on a failing case.
  Case vllm;
  vllm.topology = {2, 1, false, false};
  vllm.tokens = {1, 0};
  vllm.path = Path::gathered;
  vllm.monolithic = true;
  EXPECT_EQ(root_cause(*make_vllm_pre_50874_policy(), vllm, derive_step(vllm).value()), "");
}

}  // namespace
}  // namespace r3
