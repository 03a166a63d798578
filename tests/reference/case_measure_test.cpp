#include "reference/case_measure.hpp"

#include <gtest/gtest.h>

#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

Case minimal_sp_case() { return test::smallest_sp_gathered_case(); }

TEST(NonDefaultFields, CountsScalarsNonZeroTokensAndListEntries) {
  EXPECT_EQ(non_default_fields(Case{}), 0);
  EXPECT_EQ(non_default_fields(minimal_sp_case()), 6);  // dp, tp, ep, sp, one token, path
  Case c = minimal_sp_case();
  c.padding = {PaddingMode::cudagraph, {4, 8}};
  c.metadata = MetadataOverride{std::vector<int64_t>{1, 0}, true, std::nullopt};
  c.note = "from a log";
  EXPECT_EQ(non_default_fields(c), 6 + 3 + 2 + 1 + 1);
}

TEST(DescribeChanges, OneItemPerChangedField) {
  Case before = minimal_sp_case();
  Case after = before;
  EXPECT_TRUE(describe_changes(before, after).empty());
  before.topology.dp = 3;
  before.tokens = {5, 0, 2};
  before.monolithic = true;
  EXPECT_EQ(describe_changes(before, after),
            (std::vector<std::string>{"dp 3 -> 2", "tokens [5, 0, 2] -> [1, 0]", "monolithic true -> false"}));
}

TEST(DescribeChanges, LongTokenListsAreAbbreviated) {
  Case before = minimal_sp_case();
  before.topology.dp = 10;
  before.tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(describe_changes(before, minimal_sp_case())[1],
            "tokens [1, 2, 3, 4, 5, 6, 7, 8, ... (10 entries)] -> [1, 0]");
}

TEST(Summarize, OneLineAReaderCanCheck) {
  EXPECT_EQ(summarize(minimal_sp_case()),
            "dp 2 tp 2 ep sp, M 1, tokens [1, 0], L 1 K 1 E 1, padding none, path gathered, layer 0");
}

}  // namespace
}  // namespace r3
