#include "fuzz/generate/enumerating_source.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/generate/case_domain.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

// D = T = 1, M <= 2, one layer, one expert, no CUDA graphs: ep (2) x (M = 1: tokens 0..1,
// M = 2: tokens 0..2) (5) x padding none or dp_max (2) x monolithic (2) = 40 cases.
CaseDomain tiny_domain(Profile profile) {
  DomainBounds b;
  b.max_dp = 1, b.max_ranks = 1, b.max_tp = 1, b.max_tokens = 2, b.max_layers = 1, b.max_top_k = 1, b.max_experts = 1;
  b.cudagraph = false;
  return {profile, b, vllm::engine()};  // vLLM's cases: the counts below are theirs
}

std::vector<Case> enumerate(const CaseDomain& domain) {
  std::vector<Case> cases;
  EnumeratingSource source;
  do cases.push_back(draw(source, domain));
  while (source.advance());
  return cases;
}

std::set<std::vector<uint8_t>> distinct(const std::vector<Case>& cases) {
  std::set<std::vector<uint8_t>> keys;
  for (const Case& c : cases) keys.insert(case_to_binary(c));
  return keys;
}

TEST(EnumeratingSource, VisitsEveryCaseOfTheBoundsOnce) {
  const std::vector<Case> cases = enumerate(tiny_domain(Profile::any()));
  EXPECT_EQ(cases.size(), 40u);
  EXPECT_EQ(distinct(cases).size(), 40u);
  for (const Case& c : cases) EXPECT_TRUE(validate(c).ok());
  // Depth first, each choice from lo: the first case is the simplest, the last the largest.
  Case first;
  first.tokens = {0};
  EXPECT_EQ(cases.front(), first);
  EXPECT_EQ(cases.back().max_num_tokens, 2);
  EXPECT_EQ(cases.back().tokens, std::vector<int64_t>{2});
  EXPECT_TRUE(cases.back().monolithic && cases.back().topology.ep);
}

TEST(EnumeratingSource, AProfileFoldsTheCasesItCannotRunIntoOnesItCan) {
  // Under vllm a step with every rank idle gets one token: tokens [0] and [1] become one case.
  const std::vector<Case> cases = enumerate(tiny_domain(kDefaultProfile));
  EXPECT_EQ(cases.size(), 40u);
  EXPECT_EQ(distinct(cases).size(), 24u);
  for (const Case& c : cases) EXPECT_TRUE(in_profile(c, kDefaultProfile));
}

TEST(EnumeratingSource, ReplaysThePrefixAndAdvancesTheLastChoice) {
  EnumeratingSource source;
  EXPECT_EQ(source.choose({Field::dp, 0, 1, 2}), 1);
  EXPECT_EQ(source.choose({Field::tp, 0, 5, 6}), 5);
  EXPECT_EQ(source.choose({Field::token_shape, 0, 0, 3}), 0);  // a hint: not enumerated
  ASSERT_TRUE(source.advance());
  EXPECT_EQ(source.choose({Field::dp, 0, 1, 2}), 1);
  EXPECT_EQ(source.choose({Field::tp, 0, 5, 6}), 6);
  ASSERT_TRUE(source.advance());
  EXPECT_EQ(source.choose({Field::dp, 0, 1, 2}), 2);
  EXPECT_EQ(source.choose({Field::tp, 0, 5, 6}), 5);
  ASSERT_TRUE(source.advance());
  EXPECT_EQ(source.choose({Field::dp, 0, 1, 2}), 2);
  EXPECT_EQ(source.choose({Field::tp, 0, 5, 6}), 6);
  EXPECT_FALSE(source.advance());
}

}  // namespace
}  // namespace r3
