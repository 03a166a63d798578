// The Ascend case's own rules (reference/engines/ascend/validate.cpp): each error names the key.
#include "reference/engines/ascend/validate.hpp"

#include <gtest/gtest.h>

#include "reference/engines/ascend/fields.hpp"
#include "tests/support/ascend_fixtures.hpp"

namespace r3::ascend {
namespace {

std::string error_of(const Case& c) {
  const Status s = validate(c);
  return s.ok() ? "ok" : s.error().message;
}

TEST(AscendValidate, AcceptsAStepWithDpMetadataOnPathSingle) { EXPECT_EQ(error_of(test::ascend_case(2, 2, true, true, {3, 4})), "ok"); }

TEST(AscendValidate, NamesTheKey) {
  Case c = test::ascend_case(1, 2, true, false, {5});
  c.engine_fields.reset();
  EXPECT_EQ(error_of(c), "ascend: an ascend case needs its fields (chip, runner, graph)");
  c = test::ascend_case(1, 2, true, false, {5});
  c.path = Path::gathered;
  EXPECT_EQ(error_of(c), "path: an ascend case has no path (its comm type places the rows), got gathered");
  c = test::ascend_case(2, 2, true, false, {5, 1});
  c.padding.mode = PaddingMode::dp_max;
  c.microbatches = 2;
  EXPECT_EQ(error_of(c), "microbatches: vllm-ascend never micro-batches (platform.py resets enable_dbo), got 2");
  c = test::ascend_case(1, 2, true, false, {5});
  fields_of(c)->mc2_tokens = -1;
  EXPECT_EQ(error_of(c), "ascend.mc2_tokens: -1 is outside [0, 1048576] (0: derived)");
  c = test::ascend_case(1, 2, true, false, {5});
  c.layer = 2;
  EXPECT_EQ(error_of(c).substr(0, 6), "layer:");
}

TEST(AscendValidate, ParsersListTheAllowedValues) {
  EXPECT_EQ(parse_chip("a4").error().message, "ascend.chip: \"a4\" is not one of a2, a3, a5, 310p");
  EXPECT_EQ(parse_comm("mc3").error().message, "ascend.comm: \"mc3\" is not one of allgather, mc2, alltoall, fused_mc2");
  EXPECT_EQ(*parse_chip("310p"), Chip::p310);
  EXPECT_EQ(*parse_graph("full_decode_only"), Graph::full_decode_only);
}

}  // namespace
}  // namespace r3::ascend
