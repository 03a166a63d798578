// vllm-ascend's shrink part (fuzz/engines/ascend/shrink.cpp): a large failing Ascend case shrinks,
// inside its profile, to the smallest step that fails the same way.
#include <gtest/gtest.h>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/oracle/judge.hpp"
#include "fuzz/shrink/shrink.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/ascend/layout.hpp"
#include "reference/engines/ascend/policy.hpp"
#include "tests/support/ascend_fixtures.hpp"

namespace r3 {
namespace {

TEST(AscendShrink, Issue15451sLayoutShrinksToTwoTokens) {
  // DP 1, TP 2, EP on A3 (MC2), a piecewise graph step at capture size 24 of M 40.
  Case c = test::ascend_case(1, 2, true, false, {13});
  c.max_num_tokens = 40;
  c.model = {4, 2, 64};
  c.layer = 3;
  c.padding = {PaddingMode::cudagraph, {8, 24}};
  ascend::fields_of(c)->graph = ascend::Graph::piecewise;
  const auto main = ascend::make_policy(ascend::Version::main);
  const CaseJudge judge = [&](const Case& x) -> Result<Judgement> {
    R3_TRY(Step step, ascend::derive_step(x));
    return judge_symbolic(x, step, *main, main->name());
  };
  ShrinkOptions options;
  options.profile = Profile::of(ascend::engine(), 0);
  Result<ShrinkResult> r = shrink_case(c, judge, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop, ShrinkStop::fixpoint);
  EXPECT_EQ(r->judgement.verdict, Verdict::wrong_rows);
  const Case& m = r->minimal;
  EXPECT_EQ(m.topology, (Topology{1, 2, true, false})) << case_to_json_text(m);
  EXPECT_EQ(m.tokens, (std::vector<int64_t>{2})) << case_to_json_text(m);
  EXPECT_EQ(m.max_num_tokens, 2) << case_to_json_text(m);
  EXPECT_EQ(ascend::fields_of(m)->graph, ascend::Graph::eager) << case_to_json_text(m);
}

}  // namespace
}  // namespace r3
