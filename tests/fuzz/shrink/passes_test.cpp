#include "fuzz/shrink/passes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <vector>

#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using Chunks = std::vector<std::pair<size_t, size_t>>;

TEST(SmallerValues, TargetFirstThenHalvingTheDistanceThenMinusOne) {
  EXPECT_EQ(smaller_values(5, 0), (std::vector<int64_t>{0, 3, 4}));
  EXPECT_EQ(smaller_values(8, 1), (std::vector<int64_t>{1, 5, 7}));
  EXPECT_EQ(smaller_values(100, 0), (std::vector<int64_t>{0, 50, 75, 88, 94, 97, 99}));
  EXPECT_EQ(smaller_values(2, 1), (std::vector<int64_t>{1}));
}

TEST(SmallerValues, NothingBelowTheTarget) {
  EXPECT_TRUE(smaller_values(1, 1).empty());
  EXPECT_TRUE(smaller_values(0, 1).empty());
}

TEST(RemovableChunks, WholeListThenHalvesThenSingles) {
  EXPECT_EQ(removable_chunks(4), (Chunks{{0, 4}, {0, 2}, {2, 4}, {0, 1}, {1, 2}, {2, 3}, {3, 4}}));
  EXPECT_EQ(removable_chunks(3), (Chunks{{0, 3}, {0, 1}, {1, 2}, {2, 3}}));
  EXPECT_EQ(removable_chunks(1), (Chunks{{0, 1}}));
  EXPECT_TRUE(removable_chunks(0).empty());
}

Case sp_case() {
  Case c;
  c.topology = {4, 4, true, true};
  c.model = {8, 4, 64};
  c.max_num_tokens = 64;
  c.tokens = {33, 0, 64, 7};
  c.padding = {PaddingMode::cudagraph, {8, 16, 128}};
  c.path = Path::gathered;
  c.monolithic = true;
  c.layer = 5;
  return c;
}

// The proposals of a vLLM case's pass `pass_name`.
std::vector<Case> proposals(std::string_view pass_name, const Case& c, bool allow_path_change = false) {
  std::vector<Case> out;
  for (const ShrinkPass& pass : shrink_passes(vllm::engine(), allow_path_change)) {
    if (pass.name == pass_name) pass.propose(c, out);
  }
  return out;
}

std::vector<std::string_view> pass_names(Engine engine, bool allow_path_change) {
  std::vector<std::string_view> names;
  for (const ShrinkPass& p : shrink_passes(engine, allow_path_change)) names.push_back(p.name);
  return names;
}

// Each engine's passes, in the order the shrinker has always tried them on its cases.
TEST(ShrinkPasses, InReaderOrderWithPathOnlyWhenAllowed) {
  EXPECT_EQ(pass_names(vllm::engine(), false),
            (std::vector<std::string_view>{"dp", "tp", "tokens", "max_num_tokens", "layers", "model", "padding", "calls",
                                           "monolithic", "idle_dummy", "metadata"}));
  EXPECT_EQ(pass_names(vllm::engine(), true)[10], "path");
  EXPECT_EQ(pass_names(sglang::engine(), false),
            (std::vector<std::string_view>{"layers", "model", "sglang dp", "sglang tp", "sglang counts",
                                           "sglang sizes", "sglang graphs", "sglang tbo"}));
  const std::vector<std::string_view> with_path = pass_names(sglang::engine(), true);
  EXPECT_EQ(std::vector<std::string_view>(with_path.end() - 2, with_path.end()),
            (std::vector<std::string_view>{"sglang forward", "sglang a2a"}));
}

// A part added to the case domain without a pass that reduces it fails here.
TEST(ShrinkPasses, EveryPartOfTheCaseDomainHasAPass) {
  std::set<CasePart> reduced;
  for (Engine e : all_engines()) {
    for (const ShrinkPass& p : shrink_passes(e, true)) reduced.insert(p.part);
  }
  std::set<CasePart> parts;
  for (const FieldInfo& f : case_fields()) parts.insert(f.part);
  EXPECT_EQ(reduced, parts);
  EXPECT_EQ(parts.size(), static_cast<size_t>(kCasePartCount));
}

// The base passes reduce every part of the case format's own fields: an engine whose cases are
// the base case (vLLM) needs no pass of its own.
TEST(ShrinkPasses, TheBasePassesReduceEveryPart) {
  std::vector<ShrinkPass> base;
  append_base_passes(base, true);
  std::set<CasePart> reduced;
  for (const ShrinkPass& p : base) reduced.insert(p.part);
  EXPECT_EQ(reduced.size(), static_cast<size_t>(kCasePartCount));
}

TEST(ShrinkPasses, DpPassRemovesRanksWithTheirTokens) {
  const auto out = proposals("dp", sp_case());
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(out[0].topology.dp, 0);  // the whole list: invalid, the driver skips it
  EXPECT_EQ(out[1].tokens, (std::vector<int64_t>{64, 7}));
  EXPECT_EQ(out[1].topology.dp, 2);
  EXPECT_EQ(out[6].tokens, (std::vector<int64_t>{33, 0, 64}));
  EXPECT_EQ(out[6].topology.dp, 3);
}

TEST(ShrinkPasses, TpPassKeepsSpOnlyWhereTpAllowsIt) {
  const auto out = proposals("tp", sp_case());
  ASSERT_EQ(out.size(), 3u);  // tp 1 (dropping SP), tp 3, SP off; EP stays while SP is on
  EXPECT_EQ(out[0].topology, (Topology{4, 1, true, false}));
  EXPECT_EQ(out[1].topology, (Topology{4, 3, true, true}));
  EXPECT_EQ(out[2].topology, (Topology{4, 4, true, false}));
  Case sp_shard = sp_case();
  sp_shard.path = Path::sp_shard;
  sp_shard.monolithic = false;
  EXPECT_EQ(proposals("tp", sp_shard)[0].topology, (Topology{4, 1, true, true}));  // invalid: kept for the driver to skip
}

TEST(ShrinkPasses, TokensPassClampsAllRanksThenEachRank) {
  const auto out = proposals("tokens", sp_case());
  EXPECT_EQ(out[0].tokens, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(out[1].tokens, (std::vector<int64_t>{32, 0, 32, 7}));
  // after the clamps come rank 0's own values: 0, 17, 25, 29, 31, 32
  auto first_own = std::find_if(out.begin(), out.end(), [](const Case& c) {
    return c.tokens == std::vector<int64_t>{0, 0, 64, 7};
  });
  ASSERT_NE(first_own, out.end());
  EXPECT_EQ((first_own + 1)->tokens, (std::vector<int64_t>{17, 0, 64, 7}));
}

TEST(ShrinkPasses, MaxNumTokensPassClampsTokensUnderM) {
  const auto out = proposals("max_num_tokens", sp_case());
  EXPECT_EQ(out[0].max_num_tokens, 1);
  EXPECT_EQ(out[0].tokens, (std::vector<int64_t>{1, 0, 1, 1}));
  for (const Case& c : out) EXPECT_TRUE(validate(c).ok()) << validate(c).error().message;
}

TEST(ShrinkPasses, LayersPassKeepsTheLayerBelowTheLayerCount) {
  const auto out = proposals("layers", sp_case());
  EXPECT_EQ(out[0].layer, 0);
  for (const Case& c : out) EXPECT_TRUE(validate(c).ok()) << validate(c).error().message;
  const auto one_layer = std::find_if(out.begin(), out.end(), [](const Case& c) { return c.model.layers == 1; });
  ASSERT_NE(one_layer, out.end());
  EXPECT_EQ(one_layer->layer, 0);
}

TEST(ShrinkPasses, ModelPassKeepsTopKWithinExperts) {
  const auto out = proposals("model", sp_case());
  for (const Case& c : out) EXPECT_TRUE(validate(c).ok()) << validate(c).error().message;
  EXPECT_EQ(out[0].model, (ModelShape{8, 1, 64}));
  const auto one_expert = std::find_if(out.begin(), out.end(), [](const Case& c) { return c.model.experts == 1; });
  ASSERT_NE(one_expert, out.end());
  EXPECT_EQ(one_expert->model, (ModelShape{8, 1, 1}));
}

TEST(ShrinkPasses, PaddingPassGoesCudagraphToNoneThenDpMaxThenFewerLowerSizes) {
  const auto out = proposals("padding", sp_case());
  EXPECT_EQ(out[0].padding, (Padding{PaddingMode::none, {}}));
  EXPECT_EQ(out[0].tokens, sp_case().tokens);
  EXPECT_EQ(out[1].padding, (Padding{PaddingMode::none, {}}));
  EXPECT_EQ(out[1].tokens, (std::vector<int64_t>{128, 128, 128, 128}));  // the bucket's rows as real tokens (over M: invalid)
  EXPECT_EQ(out[2].padding, (Padding{PaddingMode::dp_max, {}}));
  EXPECT_EQ(out[3].padding.cudagraph_sizes, (std::vector<int64_t>{}));  // invalid, skipped by the driver
  EXPECT_EQ(out[4].padding.cudagraph_sizes, (std::vector<int64_t>{16, 128}));
  const auto lowered = std::find_if(out.begin(), out.end(), [](const Case& c) {
    return c.padding.cudagraph_sizes == std::vector<int64_t>{8, 16, 17};
  });
  EXPECT_NE(lowered, out.end());  // the last size goes toward its predecessor + 1
}

TEST(ShrinkPasses, LeavingDpMaxLeavesMicroBatching) {
  Case c = sp_case();
  c.padding = {PaddingMode::dp_max, {}};
  c.microbatches = 2;
  const auto out = proposals("padding", c);
  ASSERT_EQ(out.size(), 2u);
  for (const Case& next : out) {
    EXPECT_EQ(next.padding.mode, PaddingMode::none);
    EXPECT_EQ(next.microbatches, 1);
    EXPECT_TRUE(validate(next).ok());
  }
  EXPECT_EQ(out[1].tokens, (std::vector<int64_t>{64, 64, 64, 64}));
}

TEST(ShrinkPasses, CallsPassDropsChunkingBeforeShrinkingTheChunk) {
  Case c = sp_case();
  c.path = Path::sp_shard;
  c.monolithic = false;
  c.dp_chunk = 4;
  const auto out = proposals("calls", c);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(out[0].dp_chunk.has_value());
  EXPECT_EQ(out[1].dp_chunk, 1);
  EXPECT_EQ(out[2].dp_chunk, 3);
}

TEST(ShrinkPasses, PathPassMovesTowardSingleWithOneRank) {
  const auto out = proposals("path", sp_case(), true);
  ASSERT_EQ(out.size(), 5u);  // single from each of the 4 ranks, then local
  EXPECT_EQ(out[2].path, Path::single);
  EXPECT_EQ(out[2].tokens, (std::vector<int64_t>{64}));
  EXPECT_EQ(out[2].topology, (Topology{1, 4, true, false}));
  EXPECT_TRUE(validate(out[2]).ok());
  EXPECT_EQ(out[4].path, Path::local);
  EXPECT_FALSE(out[4].monolithic);
  EXPECT_FALSE(out[4].topology.sp);
  EXPECT_TRUE(validate(out[4]).ok());
}

TEST(ShrinkPasses, MetadataPassDropsTheOverrideFirst) {
  Case c = sp_case();
  c.metadata = MetadataOverride{std::vector<int64_t>{3, 4}, true, std::nullopt};
  const auto out = proposals("metadata", c);
  ASSERT_GE(out.size(), 3u);
  EXPECT_FALSE(out[0].metadata.has_value());
  EXPECT_FALSE(out[1].metadata->num_tokens_across_dp.has_value());
  EXPECT_EQ(out[2].metadata->num_tokens_across_dp, (std::vector<int64_t>{}));
  EXPECT_EQ(out.back().metadata->local_sizes_given, false);
}

}  // namespace
}  // namespace r3
