#include "reference/validate.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "tests/support/case_fixtures.hpp"
#include "tests/support/case_gen.hpp"

namespace r3 {
namespace {

using test::make_case;

Case valid() { return make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered, true); }

std::string error_of(const Case& c) {
  Status s = validate(c);
  return s ? "(valid)" : s.error().message;
}

template <class Edit>
std::string error_after(Edit edit) {
  Case c = valid();
  edit(c);
  return error_of(c);
}

TEST(Validate, AcceptsTheDesignExample) { EXPECT_EQ(error_of(valid()), "(valid)"); }

TEST(Validate, Topology) {
  EXPECT_EQ(error_after([](Case& c) { c.topology.dp = 0; }), "topology.dp: 0 is out of range [1, 1024]");
  EXPECT_EQ(error_after([](Case& c) { c.topology.dp = 1025; }), "topology.dp: 1025 is out of range [1, 1024]");
  EXPECT_EQ(error_after([](Case& c) { c.topology.tp = 65; }), "topology.tp: 65 is out of range [1, 64]");
  EXPECT_EQ(error_after([](Case& c) { c.topology.ep = false; }),
            "topology.sp: sequence parallel needs ep true (vLLM enables SP MoE only with EP)");
  EXPECT_EQ(error_after([](Case& c) { c.topology.tp = 1; }), "topology.sp: sequence parallel needs tp > 1, tp is 1");
  EXPECT_EQ(error_after([](Case& c) {
              c.topology.dp = 1;
              c.tokens = {3};
            }),
            "topology.sp: sequence parallel needs dp > 1, dp is 1");
}

TEST(Validate, Model) {
  EXPECT_EQ(error_after([](Case& c) { c.model.layers = 0; }), "model.layers: 0 is out of range [1, 1024]");
  EXPECT_EQ(error_after([](Case& c) { c.model.experts = 0; }), "model.experts: 0 is out of range [1, 1048576]");
  EXPECT_EQ(error_after([](Case& c) {
              c.model.experts = 4;
              c.model.top_k = 5;
            }),
            "model.top_k: 5 is out of range [1, 4]");
  EXPECT_EQ(error_after([](Case& c) { c.model.top_k = 65; }), "model.top_k: 65 is out of range [1, 64]");
}

TEST(Validate, MaxNumTokensAndTokens) {
  EXPECT_EQ(error_after([](Case& c) { c.max_num_tokens = 0; }), "max_num_tokens: 0 is out of range [1, 16777216]");
  EXPECT_EQ(error_after([](Case& c) { c.max_num_tokens = (int64_t{1} << 24) + 1; }),
            "max_num_tokens: 16777217 is out of range [1, 16777216]");
  EXPECT_EQ(error_after([](Case& c) { c.tokens = {3, 2, 1}; }),
            "tokens: has 3 entries, topology.dp is 2 (one count per DP rank)");
  EXPECT_EQ(error_after([](Case& c) { c.tokens = {3, -1}; }), "tokens[1]: -1 is out of range [0, 16777216]");
  EXPECT_EQ(error_after([](Case& c) { c.tokens = {9, 2}; }),
            "tokens[0]: 9 exceeds max_num_tokens 8 (the scheduler never schedules more than M real tokens)");
}

TEST(Validate, Padding) {
  EXPECT_EQ(error_after([](Case& c) { c.padding = {PaddingMode::cudagraph, {}}; }),
            "padding.cudagraph: needs 1 to 1024 capture sizes, has 0");
  EXPECT_EQ(error_after([](Case& c) { c.padding = {PaddingMode::cudagraph, {0, 4}}; }),
            "padding.cudagraph[0]: 0 is out of range [1, 16777216]");
  EXPECT_EQ(error_after([](Case& c) { c.padding = {PaddingMode::cudagraph, {4, 4}}; }),
            "padding.cudagraph: sizes must be strictly increasing, entry 1 (4) follows 4");
  EXPECT_EQ(error_after([](Case& c) { c.padding = {PaddingMode::cudagraph, {2, 64}}; }), "(valid)");
}

TEST(Validate, Path) {
  EXPECT_EQ(error_after([](Case& c) { c.path = Path::single; }),
            "path: single means no DP metadata and needs dp 1, dp is 2");
  EXPECT_EQ(error_of(make_case(test::kSingle, 8, {3}, Path::gathered)),
            "path: gathered needs dp > 1 (with dp 1 there is no DP metadata: use single)");
  EXPECT_EQ(error_of(make_case(test::kDp2Tp2Ep, 8, {3, 2}, Path::sp_shard)), "path: sp_shard needs topology.sp true");
  EXPECT_EQ(error_after([](Case& c) {
              c.path = Path::local;
              c.monolithic = false;
            }),
            "path: local with topology.sp true: the modular kernel sees the SP shard, use sp_shard");
  EXPECT_EQ(error_of(make_case(test::kDp2, 8, {3, 2}, Path::local, true)),
            "monolithic: true needs path single or gathered (a monolithic kernel sees the whole input), path is local");
  EXPECT_EQ(error_after([](Case& c) { c.path = Path::sp_shard; }),
            "monolithic: true needs path single or gathered (a monolithic kernel sees the whole input), path is "
            "sp_shard");
}

TEST(Validate, Layer) {
  EXPECT_EQ(error_after([](Case& c) { c.layer = 4; }), "layer: 4 is out of range [0, 3]");
  EXPECT_EQ(error_after([](Case& c) { c.layer = -1; }), "layer: -1 is out of range [0, 3]");
}

TEST(Validate, Microbatches) {
  EXPECT_EQ(error_after([](Case& c) { c.microbatches = 0; }), "microbatches: 0 is out of range [1, 16]");
  EXPECT_EQ(error_after([](Case& c) { c.microbatches = 17; }), "microbatches: 17 is out of range [1, 16]");
  EXPECT_EQ(error_after([](Case& c) { c.microbatches = 2; }),
            "microbatches: more than 1 needs padding \"dp_max\" (every rank runs P = max real tokens)");
  Case single = make_case(test::kSingle, 8, {3}, Path::single);
  single.microbatches = 2;
  single.padding.mode = PaddingMode::dp_max;
  EXPECT_EQ(error_of(single), "microbatches: more than 1 needs dp > 1 (micro-batching runs only under DP)");
  EXPECT_EQ(error_after([](Case& c) {
              c.microbatches = 2;
              c.padding.mode = PaddingMode::dp_max;
              c.dp_chunk = 2;
            }),
            "dp_chunk: cannot be combined with microbatches > 1");
  EXPECT_EQ(error_after([](Case& c) {
              c.microbatches = 2;
              c.padding.mode = PaddingMode::dp_max;
            }),
            "(valid)");
}

TEST(Validate, DpChunk) {
  Case c = make_case(test::kDp2, 5000, {5000, 0}, Path::local);
  c.dp_chunk = 0;
  EXPECT_EQ(error_of(c), "dp_chunk: 0 is out of range [1, 16777216]");
  c.dp_chunk = 1;
  EXPECT_EQ(error_of(c), "dp_chunk: 1 splits the step into 5000 chunks, at most 4096 allowed");
  c.dp_chunk = 2;
  EXPECT_EQ(error_of(c), "(valid)");
  EXPECT_EQ(error_after([](Case& g) { g.dp_chunk = 2; }),
            "dp_chunk: needs path local or sp_shard (DP chunking lives in modular kernels), path is gathered");
}

TEST(Validate, Metadata) {
  EXPECT_EQ(error_after([](Case& c) {
              c.metadata = MetadataOverride{};
              c.padding.mode = PaddingMode::dp_max;
              c.microbatches = 2;
            }),
            "metadata: overrides describe a single capture call; remove microbatches and dp_chunk");
  EXPECT_EQ(error_after([](Case& c) { c.metadata = MetadataOverride{std::vector<int64_t>{3, -2}, false, {}}; }),
            "metadata.num_tokens_across_dp[1]: -2 is out of range [0, 16777216]");
  EXPECT_EQ(error_after([](Case& c) { c.metadata = MetadataOverride{{}, true, std::vector<int64_t>{1, 1, 1, 1 << 25}}; }),
            "metadata.local_sizes[3]: 33554432 is out of range [0, 16777216]");
  EXPECT_EQ(error_after([](Case& c) {
              c.metadata = MetadataOverride{std::vector<int64_t>(1024 * 64 + 1, 1), false, {}};
            }),
            "metadata.num_tokens_across_dp: has 65537 entries, at most 65536 allowed");
  // Disagreeing metadata is well formed: the reference rejects it later (Step::rejection).
  EXPECT_EQ(error_after([](Case& c) { c.metadata = MetadataOverride{std::vector<int64_t>{9, 9, 9}, true, {}}; }),
            "(valid)");
}

RC_GTEST_PROP(ValidateProperty, GeneratedCasesAreValid, ()) {
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = true});
  const Status s = validate(c);
  RC_ASSERT(s.ok());
}

}  // namespace
}  // namespace r3
