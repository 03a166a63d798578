#include "fuzz/cli/refusal_groups.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace r3 {
namespace {

TEST(RefusalGroups, OneBlockPerCauseInTheOrderMetWithEveryFileUnderIt) {
  RefusalGroups g;
  EXPECT_TRUE(g.empty());
  g.add("sglang-fixed models another engine than the case's (vllm)", "a.json");
  g.add("--impl bogus: unknown implementation", "b.json");
  g.add("sglang-fixed models another engine than the case's (vllm)", "c.json");
  EXPECT_FALSE(g.empty());
  EXPECT_EQ(g.files(), 3u);
  EXPECT_EQ(g.blocks(), (std::vector<std::string>{
                            "sglang-fixed models another engine than the case's (vllm): 2 case files:\n  a.json\n  c.json",
                            "--impl bogus: unknown implementation: 1 case file:\n  b.json"}));
}

TEST(RefusalGroups, TheSameFileTwiceIsListedTwice) {
  // One file judged by two --impl of the other engine is refused once per implementation.
  RefusalGroups g;
  g.add("cause", "a.json");
  g.add("cause", "a.json");
  EXPECT_EQ(g.blocks(), std::vector<std::string>{"cause: 2 case files:\n  a.json\n  a.json"});
}

}  // namespace
}  // namespace r3
