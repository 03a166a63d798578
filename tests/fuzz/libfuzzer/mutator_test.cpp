#include "fuzz/libfuzzer/mutator.hpp"

#include <set>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "reference/layout.hpp"
#include "reference/validate.hpp"
#include "tests/support/case_fixtures.hpp"
#include "tests/support/case_gen.hpp"

namespace r3 {
namespace {

const BinaryLimits kLimits = concrete_binary_limits();

Case sp_case() { return test::make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered); }

TEST(Repair, ResolvesConflictsInAFixedOrder) {
  Case c = sp_case();
  c.topology.dp = 1;       // SP needs dp > 1; gathered needs dp > 1
  c.tokens = {9, 4, 4};    // one count per rank, at most M
  c.model.top_k = 70;      // at most the limit
  c.layer = 9;             // below L
  c.dp_chunk = 3;          // needs path local or sp_shard
  Case expected = sp_case();
  expected.topology = {1, 2, true, false};
  expected.tokens = {8};
  expected.model.top_k = kLimits.max_top_k;
  expected.layer = 3;
  expected.path = Path::single;
  EXPECT_EQ(repair(c, kLimits), expected);
}

TEST(Repair, MicrobatchesForceDpMaxPaddingAndDropChunksAndMetadata) {
  Case c = sp_case();
  c.path = Path::sp_shard;
  c.microbatches = 2;
  c.dp_chunk = 2;
  c.metadata = MetadataOverride{};
  const Case r = repair(c, kLimits);
  EXPECT_EQ(r.padding.mode, PaddingMode::dp_max);
  EXPECT_FALSE(r.dp_chunk);
  EXPECT_FALSE(r.metadata);
  EXPECT_EQ(r.microbatches, 2);
}

RC_GTEST_PROP(RepairProperty, LeavesValidCasesInsideTheLimitsUnchanged, ()) {
  Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = false});
  c.model.top_k = std::min(c.model.top_k, kLimits.max_top_k);
  RC_PRE(c.padding.cudagraph_sizes.size() <= static_cast<size_t>(kLimits.max_cudagraph_sizes));
  RC_PRE(validate(c).ok());
  RC_ASSERT(repair(c, kLimits) == c);
}

RC_GTEST_PROP(MutateProperty, EveryMutationGivesAValidCaseThatRoundTrips, (uint64_t seed)) {
  const Case start = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = true});
  MutatorRng rng(seed);
  for (int m = 0; m < kMutationCount; ++m) {
    const Case out = mutate(start, static_cast<Mutation>(m), rng, kLimits);
    RC_ASSERT(validate(out).ok());
    auto decoded = case_from_binary(case_to_binary(out));
    RC_ASSERT(decoded.ok());
    RC_ASSERT(*decoded == out);
  }
}

// The libFuzzer source keeps its profile: every mutation, crossover and byte-level mutation of
// any input lands inside the active profile.
RC_GTEST_PROP(MutateProperty, EveryMutationAndCrossOverStaysInsideTheProfile, (uint64_t seed)) {
  const Profile p = *rc::gen::element(Profile::vllm, Profile::vllm_legacy, Profile::any);
  const Case a = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = true});
  const Case b = *test::gen_valid_case({.microbatches = true, .dp_chunk = true});
  MutatorRng rng(seed);
  for (int m = 0; m < kMutationCount; ++m) {
    const Case out = mutate(a, static_cast<Mutation>(m), rng, kLimits, p);
    RC_ASSERT(validate(out).ok());
    RC_ASSERT(in_profile(out, p));
  }
  const Case crossed = cross_over(a, b, rng, kLimits, p);
  RC_ASSERT(in_profile(crossed, p));
  std::vector<uint8_t> bytes = *rc::gen::container<std::vector<uint8_t>>(rc::gen::arbitrary<uint8_t>());
  bytes.resize(std::max<size_t>(bytes.size(), 1));
  bytes.resize(bytes.size() + 512);
  const size_t n = mutate_bytes(bytes.data(), bytes.size() - 512, bytes.size(), static_cast<unsigned>(seed), kLimits, p);
  auto decoded = case_from_binary(std::span<const uint8_t>(bytes.data(), n), kLimits);
  if (decoded) RC_ASSERT(in_profile(*decoded, p) || n == bytes.size() - 512);  // untouched when it did not fit
}

TEST(Mutate, TokenCountsReachTheCornerCaseEdges) {
  Case c = sp_case();
  c.topology.tp = 3;
  c.max_num_tokens = 8;
  c.padding = {PaddingMode::cudagraph, {4}};
  MutatorRng rng(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 400; ++i) {
    for (int64_t t : mutate(c, Mutation::tokens, rng, kLimits).tokens) seen.insert(t);
  }
  // 0, 1, M-1, M; multiples of T and their neighbours (2, 3, 4, 5, 6, 7); bucket edges 3, 4, 5.
  EXPECT_EQ(seen, (std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Mutate, PaddingOffersVllmDefaultCaptureSizesAndBucketsAboveM) {
  MutatorRng rng(3);
  bool defaults = false;
  bool above_m = false;
  for (int i = 0; i < 200; ++i) {
    const Case out = mutate(sp_case(), Mutation::padding, rng, kLimits, Profile::any);
    const auto& sizes = out.padding.cudagraph_sizes;
    if (sizes.size() == 16 && sizes[0] == 1 && sizes[1] == 2 && sizes[2] == 4 && sizes[3] == 8 && sizes[15] == 104) {
      defaults = true;
    }
    if (sizes == std::vector<int64_t>{7, 8, 9, 16}) above_m = true;
  }
  EXPECT_TRUE(defaults);
  EXPECT_TRUE(above_m);
}

TEST(Mutate, MetadataMutationsProduceBothAcceptedAndRejectedSteps) {
  MutatorRng rng(11);
  int rejected = 0;
  int accepted = 0;
  for (int i = 0; i < 200; ++i) {
    const Case out = mutate(sp_case(), Mutation::metadata, rng, kLimits, Profile::any);
    if (!out.metadata) continue;
    auto step = derive_step(out);
    ASSERT_TRUE(step);
    (step->rejection ? rejected : accepted)++;
  }
  EXPECT_GT(rejected, 20);
  EXPECT_GT(accepted, 20);
}

TEST(MutateBytes, IsDeterministicAndStartsFromTheStartingCaseOnGarbage) {
  std::vector<uint8_t> a(64, 0xAB);
  std::vector<uint8_t> b = a;
  const size_t na = mutate_bytes(a.data(), 5, a.size(), 1234);
  const size_t nb = mutate_bytes(b.data(), 5, b.size(), 1234);
  ASSERT_EQ(na, nb);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(na), b.begin()));
  auto decoded = case_from_binary(std::span<const uint8_t>(a.data(), na));
  ASSERT_TRUE(decoded) << decoded.error().message;
  MutatorRng rng(1234);
  EXPECT_EQ(*decoded, mutate(starting_case(), rng, kLimits));
}

TEST(MutateBytes, LeavesTheInputWhenTheEncodingDoesNotFit) {
  std::vector<uint8_t> bytes = case_to_binary(sp_case());
  const std::vector<uint8_t> before = bytes;
  EXPECT_EQ(mutate_bytes(bytes.data(), bytes.size(), 3, 99), before.size());
  EXPECT_EQ(bytes, before);
}

TEST(CrossOver, TakesEveryPartFromOneParent) {
  Case a = sp_case();
  Case b = sp_case();
  b.tokens = {8, 0};
  b.max_num_tokens = 8;
  b.model = {6, 3, 128};
  b.layer = 5;
  b.padding = {PaddingMode::dp_max, {}};
  MutatorRng rng(5);
  std::set<std::vector<int64_t>> tokens;
  for (int i = 0; i < 50; ++i) {
    const Case child = cross_over(a, b, rng, kLimits);
    EXPECT_TRUE(child.tokens == a.tokens || child.tokens == b.tokens);
    EXPECT_TRUE(child.model == a.model || child.model == b.model);
    EXPECT_TRUE(child.padding == a.padding || child.padding == b.padding);
    tokens.insert(child.tokens);
  }
  EXPECT_EQ(tokens.size(), 2u);
  std::vector<uint8_t> out(64);
  const auto ea = case_to_binary(a);
  const auto eb = case_to_binary(b);
  const size_t n = cross_over_bytes(ea, eb, out.data(), out.size(), 5);
  EXPECT_TRUE(case_from_binary(std::span<const uint8_t>(out.data(), n)));
}

}  // namespace
}  // namespace r3
