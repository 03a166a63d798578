#include "fuzz/exhaust/search.hpp"

#include <new>

#include <gtest/gtest.h>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/exhaust/case_space.hpp"
#include "fuzz/exhaust/comparison.hpp"
#include "fuzz/oracle/policy_implementation.hpp"
#include "reference/engines/vllm/policy.hpp"

namespace r3 {
namespace {

ExhaustBounds small() { return {.max_dp = 3, .max_tp = 3, .max_tokens = 4, .max_m = 4}; }

int64_t space_size(const ExhaustBounds& b) {
  int64_t n = 0;
  for (const CaseUnit& u : enumerate_units(b)) n += for_each_case(u, b, [](const Case&) { return true; });
  return n;
}

TEST(ExhaustSearch, R3FixedAgreesWithTheReferenceOnTheWholeSpace) {
  PolicyImplementation impl(make_r3_fixed_policy());
  for (int jobs : {1, 3}) {
    const ExhaustReport r = exhaust_search(small(), differs_from_reference(judge_implementation(impl)), {jobs, {}});
    EXPECT_FALSE(r.counterexample.has_value()) << r.counterexample->detail;
    EXPECT_EQ(r.cases, space_size(small()));
    EXPECT_EQ(r.invalid, 0);
  }
}

// Under profile vllm the smallest difference is the per-rank replay buffer: two DP ranks (the
// idle one running its dummy token) gathered into a monolithic kernel, 2 rows into 1.
TEST(ExhaustSearch, VllmPre50874SmallestReachableCounterexampleIsTheReplayBuffer) {
  PolicyImplementation impl(make_vllm_pre_50874_policy());
  const ExhaustReport r = exhaust_search(small(), differs_from_reference(judge_implementation(impl)), {2, {}});
  ASSERT_TRUE(r.counterexample.has_value());
  EXPECT_EQ(r.counterexample->position, 866);
  EXPECT_EQ(r.cases, 867);
  EXPECT_EQ(case_to_json(r.counterexample->c).dump(),
            R"({"format":"r3fuzz-case/1","idle_dummy":true,"layer":0,"max_num_tokens":1,)"
            R"("model":{"experts":4,"layers":2,"top_k":1},"monolithic":true,"padding":"none","path":"gathered",)"
            R"("tokens":[0,1],"topology":{"dp":2,"ep":false,"sp":false,"tp":1}})");
  EXPECT_EQ(r.counterexample->detail,
            "vllm-pre-50874: capacity failure (branch naive_total): replay buffer has 1 rows, the gathered batch the "
            "monolithic kernel processes has 2");
}

TEST(ExhaustSearch, VllmPre50874SmallestCounterexampleUnderProfileAnyIsABucketAboveM) {
  PolicyImplementation impl(make_vllm_pre_50874_policy());
  ExhaustBounds b = small();
  b.profile = Profile::any();
  const ExhaustReport r = exhaust_search(b, differs_from_reference(judge_implementation(impl)), {2, {}});
  ASSERT_TRUE(r.counterexample.has_value());
  // Unit 0 (D=1, T=1, tokens [0]), M=1, path single: paddings none, dp_max and cudagraph [1]
  // (4 cases each) pass; cudagraph [2] runs the step with 2 rows on a 1-row buffer.
  EXPECT_EQ(r.counterexample->position, 12);
  EXPECT_EQ(r.cases, 13);
  EXPECT_EQ(case_to_json(r.counterexample->c).dump(),
            R"({"format":"r3fuzz-case/1","layer":0,"max_num_tokens":1,"model":{"experts":4,"layers":2,"top_k":1},)"
            R"("monolithic":false,"padding":{"cudagraph":[2]},"path":"single","tokens":[0],)"
            R"("topology":{"dp":1,"ep":false,"sp":false,"tp":1}})");
  EXPECT_EQ(r.counterexample->detail,
            "vllm-pre-50874: capacity failure (branch error): capture buffer has 1 rows, a rank runs 2 tokens");
}

TEST(ExhaustSearch, PairSearchFindsTheSameSmallestDifferenceOnAnyThreadCount) {
  PolicyImplementation pre(make_vllm_pre_50874_policy());
  PolicyImplementation post(make_vllm_50874_policy());
  const CaseCheck check = differs_between(judge_implementation(pre), judge_implementation(post));
  const ExhaustReport one = exhaust_search(small(), check, {1, {}});
  const ExhaustReport four = exhaust_search(small(), check, {4, {}});
  ASSERT_TRUE(one.counterexample.has_value());
  ASSERT_TRUE(four.counterexample.has_value());
  EXPECT_EQ(one.counterexample->c, four.counterexample->c);
  EXPECT_EQ(one.counterexample->position, four.counterexample->position);
  EXPECT_EQ(one.counterexample->detail, four.counterexample->detail);
  EXPECT_EQ(one.cases, four.cases);
}

// A check that throws on a worker's thread (out of memory under a cap) does not end the process,
// and a search that stopped reports it rather than "no difference".
TEST(ExhaustSearch, ACheckThatThrowsStopsTheSearchAndSaysSo) {
  for (int jobs : {1, 3}) {
    const CaseCheck check = [](const Case& c, const Step&) -> std::optional<std::string> {
      if (c.topology.dp == 2 && c.topology.tp == 2) throw std::bad_alloc();
      return std::nullopt;
    };
    const ExhaustReport r = exhaust_search(small(), check, {jobs, {}});
    EXPECT_EQ(r.internal_error, "std::bad_alloc") << jobs << " jobs";
    EXPECT_FALSE(r.counterexample.has_value());
  }
}

TEST(ExhaustSearch, ProgressIsReportedWithTheUnitCount) {
  PolicyImplementation impl(make_r3_fixed_policy());
  ExhaustBounds b = small();
  int64_t units = 0;
  ExhaustOptions options{2, [&](const ExhaustProgress& p) { units = p.units; }};
  exhaust_search(b, differs_from_reference(judge_implementation(impl)), options);
  // Called only while workers run; a fast machine may finish before the first tick.
  if (units != 0) {
    EXPECT_EQ(units, static_cast<int64_t>(enumerate_units(b).size()));
  }
}

}  // namespace
}  // namespace r3
