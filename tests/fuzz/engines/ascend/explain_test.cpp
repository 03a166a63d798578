// vllm-ascend's explain part (fuzz/engines/ascend/explain.cpp): the comm type, why the selector
// picks it, and the rows each TP rank holds, ahead of the generic layout report.
#include <gtest/gtest.h>

#include "fuzz/cli/explain.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "tests/support/ascend_fixtures.hpp"

namespace r3 {
namespace {

TEST(AscendExplain, NamesTheCommTypeAndTheRowsEachTpRankHolds) {
  Case c = test::ascend_case(1, 2, true, false, {5});
  ascend::fields_of(c)->lora = true;
  Result<Explanation> e = explain_case(c);
  ASSERT_TRUE(e.ok()) << e.error().message;
  const std::string text = explanation_text(*e);
  EXPECT_EQ(text.substr(0, text.find("\n", text.find("dp 0:")) + 1),
            "vllm-ascend: comm type alltoall (LoRA with EP), SP off, runner v1, graph eager\n"
            "rows each TP rank holds after prepare (dp: tp0 tp1 ...):\n"
            "  dp 0: 3 2\n");
  const auto doc = explanation_json(*e);
  EXPECT_EQ(doc["ascend"]["comm"], "alltoall");
  EXPECT_EQ(doc["ascend"]["sp"], false);
}

}  // namespace
}  // namespace r3
