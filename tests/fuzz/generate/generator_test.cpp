#include "fuzz/generate/generator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "fuzz/engines/vllm/draw.hpp"
#include "fuzz/generate/rng.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

TEST(Rng, PinnedSequence) {
  // A change here changes every campaign's cases and invalidates published seeds.
  Rng rng(1);
  EXPECT_EQ(rng.next(), 0xB3F2AF6D0FC710C5ull);
  EXPECT_EQ(rng.next(), 0x853B559647364CEAull);
  EXPECT_EQ(rng.below(1000), 574u);
  EXPECT_EQ(rng.range(-5, 5), -1);
}

TEST(Rng, RangeStaysInsideItsBounds) {
  Rng rng(99);
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = rng.range(3, 7);
    ASSERT_GE(v, 3);
    ASSERT_LE(v, 7);
    const int64_t w = rng.log_range(16384);
    ASSERT_GE(w, 1);
    ASSERT_LE(w, 16384);
  }
}

TEST(Generator, CaseDependsOnSeedAndIndexOnly) {
  const GeneratorOptions options;
  const GeneratedCase a = generate_case(1, 0, options);
  EXPECT_EQ(a.c.topology.dp, 15);  // pinned, like the Rng sequence
  EXPECT_EQ(a.c.topology.tp, 8);
  EXPECT_EQ(a.c.max_num_tokens, 97);
  EXPECT_EQ(a.c.path, Path::sp_shard);
  for (uint64_t i = 0; i < 100; ++i) EXPECT_EQ(generate_case(5, i, options).c, generate_case(5, i, options).c);
  int same = 0;
  for (uint64_t i = 0; i < 100; ++i) same += generate_case(5, i, options).c == generate_case(6, i, options).c;
  EXPECT_LT(same, 5);
}

// Counts of every feature the generator must reach, over the first 20000 cases of seed 1.
std::map<std::string, int> features(const GeneratorOptions& options, int count) {
  std::map<std::string, int> seen;
  for (uint64_t i = 0; i < static_cast<uint64_t>(count); ++i) {
    const GeneratedCase g = generate_case(1, i, options);
    const Case& c = g.c;
    const Status valid = validate(c);
    EXPECT_TRUE(valid.ok()) << "case #" << i << ": " << valid.error().message;
    if (!valid.ok()) continue;
    const int D = c.topology.dp, T = c.topology.tp;
    const int64_t M = c.max_num_tokens;
    switch (g.size) {
      case SizeClass::tiny: EXPECT_TRUE(D <= 4 && M <= 16) << i; break;
      case SizeClass::small: EXPECT_TRUE(M <= 64) << i; break;
      case SizeClass::production: EXPECT_TRUE(D <= 64 && M <= 65536) << i; break;
    }
    if (!options.wide_experts) {
      EXPECT_LE(c.model.experts, 32768) << i;
    }
    if (c.model.experts > 32768) ++seen["experts > 32768"];
    ++seen["path " + std::string(to_string(c.path))];
    ++seen["padding " + std::string(to_string(c.padding.mode))];
    ++seen["size " + std::string(to_string(g.size))];
    ++seen["tp " + std::to_string(T)];
    if (c.topology.sp) ++seen["sp"];
    if (c.monolithic) ++seen["monolithic"];
    if (c.microbatches > 1) ++seen["microbatches " + std::to_string(c.microbatches)];
    if (D == 1) ++seen["dp 1"];
    if (D == 64) ++seen["dp 64"];
    if (M > 16384) ++seen["M > 16384"];
    if (M % T != 0) ++seen["M mod T != 0"];
    if (c.layer == c.model.layers - 1 && c.model.layers > 1) ++seen["layer L-1"];
    if (c.metadata) ++seen["metadata"];
    if (c.idle_dummy) ++seen["idle dummy"];
    const Status inside = check_profile(c, options.profile);
    EXPECT_TRUE(inside.ok()) << "case #" << i << ": " << inside.error().message;
    if (c.padding.mode == PaddingMode::cudagraph && c.padding.cudagraph_sizes == vllm::default_cudagraph_sizes())
      ++seen["vllm default cudagraph sizes"];
    const std::vector<int64_t> n = derive_num_tokens_across_dp(c);
    int64_t most = 0;
    for (int64_t x : n) most = std::max(most, c.topology.sp ? (x + T - 1) / T : x);
    if (c.dp_chunk) {
      ++seen["dp_chunk"];
      if (*c.dp_chunk > most) ++seen["dp_chunk beyond every rank"];
      if (most > *c.dp_chunk) ++seen["dp_chunk with several chunks"];
    }
    int nonzero = 0;
    for (int d = 0; d < D; ++d) {
      const int64_t real = c.tokens[static_cast<size_t>(d)];
      nonzero += real > 0;
      if (real == 0 && D > 1) ++seen["a rank with 0 tokens"];
      if (real == 1) ++seen["a rank with 1 token"];
      if (n[static_cast<size_t>(d)] == M) ++seen["n_d = M"];
      if (n[static_cast<size_t>(d)] > M) ++seen["n_d > M (bucket above M)"];
      if (n[static_cast<size_t>(d)] % T != 0) ++seen["n_d mod T != 0"];
      if (c.topology.sp && n[static_cast<size_t>(d)] % T != 0 && M - n[static_cast<size_t>(d)] < T &&
          n[static_cast<size_t>(d)] <= M)
        ++seen["heavy SP padding near capacity"];
    }
    if (D > 1 && nonzero == 1) ++seen["one rank holds every token"];
    if (c.topology.sp && c.path == Path::sp_shard && std::count(n.begin(), n.end(), 1) > 0) ++seen["SP rank with n_d = 1"];
  }
  return seen;
}

TEST(Generator, ValidCasesThatReachEveryEdgeOfTheContract) {
  const std::map<std::string, int> seen = features({.profile = Profile::any(), .engine = vllm::engine()}, 20000);
  for (const char* feature :
       {"path single", "path gathered", "path local", "path sp_shard", "padding none", "padding dp_max",
        "padding cudagraph", "size tiny", "size small", "size production", "tp 1", "tp 2", "tp 3", "tp 4", "tp 6",
        "tp 8", "sp", "monolithic", "microbatches 2", "microbatches 3", "microbatches 4", "dp 1", "dp 64",
        "M > 16384", "M mod T != 0", "layer L-1", "vllm default cudagraph sizes", "dp_chunk",
        "dp_chunk beyond every rank", "dp_chunk with several chunks", "a rank with 0 tokens", "a rank with 1 token",
        "n_d = M", "n_d > M (bucket above M)", "n_d mod T != 0", "heavy SP padding near capacity",
        "one rank holds every token", "SP rank with n_d = 1", "idle dummy"}) {
    EXPECT_GT(seen.count(feature) ? seen.at(feature) : 0, 0) << "never generated: " << feature;
  }
  EXPECT_EQ(seen.count("metadata"), 0u) << "metadata overrides are off by default";
  EXPECT_EQ(seen.count("experts > 32768"), 0u) << "wide expert counts are off by default";
}

// The default profile (vllm) reaches every edge vLLM can run, and none it cannot: no bucket
// above M, no DP chunking, no step with every rank idle; idle ranks run their dummy token.
TEST(Generator, ProfileVllmReachesEveryEdgeVllmCanRun) {
  const std::map<std::string, int> seen = features({}, 20000);
  for (const char* feature :
       {"path single", "path gathered", "path local", "path sp_shard", "padding none", "padding dp_max",
        "padding cudagraph", "sp", "monolithic", "microbatches 2", "microbatches 3", "microbatches 4", "dp 1", "dp 64",
        "M mod T != 0", "layer L-1", "a rank with 0 tokens", "a rank with 1 token", "n_d = M", "n_d mod T != 0",
        "heavy SP padding near capacity", "one rank holds every token", "SP rank with n_d = 1", "idle dummy"}) {
    EXPECT_GT(seen.count(feature) ? seen.at(feature) : 0, 0) << "never generated: " << feature;
  }
  for (const char* feature : {"n_d > M (bucket above M)", "dp_chunk", "metadata"}) {
    EXPECT_EQ(seen.count(feature), 0u) << "outside profile vllm: " << feature;
  }
}

TEST(Generator, ProfileVllmLegacyAddsDpChunking) {
  const std::map<std::string, int> seen = features({.profile = Profile::of(vllm::engine(), 1)}, 5000);
  EXPECT_GT(seen.count("dp_chunk with several chunks") ? seen.at("dp_chunk with several chunks") : 0, 0);
  EXPECT_EQ(seen.count("n_d > M (bucket above M)"), 0u);
}

TEST(Generator, OptionsTurnOnOverridesAndWideExperts) {
  GeneratorOptions options;
  options.profile = Profile::any();  // no vLLM profile has metadata overrides
  options.engine = vllm::engine();
  options.metadata_overrides = true;
  options.wide_experts = true;
  const std::map<std::string, int> seen = features(options, 5000);
  EXPECT_GT(seen.at("metadata"), 0);
  EXPECT_GT(seen.at("experts > 32768"), 0);
  int rejected = 0, consistent = 0;
  for (uint64_t i = 0; i < 5000; ++i) {
    const Case c = generate_case(1, i, options).c;
    if (!c.metadata) continue;
    (derive_step(c).value().rejection ? rejected : consistent)++;
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(consistent, 0);
}

TEST(Generator, SizeClassesCanBeChosen) {
  GeneratorOptions options;
  options.sizes = {SizeClass::tiny};
  for (uint64_t i = 0; i < 200; ++i) EXPECT_EQ(generate_case(3, i, options).size, SizeClass::tiny);
  EXPECT_EQ(parse_size_class("small").value(), SizeClass::small);
  EXPECT_EQ(parse_size_class("huge").error().message, "size: \"huge\" is not one of tiny, small, production");
}

}  // namespace
}  // namespace r3
