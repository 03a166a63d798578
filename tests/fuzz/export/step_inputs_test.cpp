// What an exported test hands each rank: the micro-batch reproducer of docs/FINDINGS.md #4 (and an
// SGLang step), call by call, and the rows the reference expects after the step.
#include "fuzz/export/step_inputs.hpp"

#include <gtest/gtest.h>

#include "fuzz/codec/case_json.hpp"

namespace r3 {
namespace {

const std::string kRegression = std::string(R3FUZZ_SOURCE_DIR) + "/corpus/regression/";

std::string runs_text(const std::vector<RowRun>& runs) {
  std::string out;
  for (const RowRun& r : runs)
    out += "(" + std::to_string(static_cast<int>(r.kind)) + " " + std::to_string(r.dp) + " " + std::to_string(r.first) +
           " " + std::to_string(r.length) + ")";
  return out;
}

TEST(StepInputs, MicrobatchesGetOneCallEachWithTheirOwnMetadata) {
  auto c = read_case_file(kRegression + "vllm-50874-wrong-rows-spec-9-1-fact.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto in = step_inputs(*c);
  ASSERT_TRUE(in.ok()) << in.error().message;
  EXPECT_EQ(in->num_tokens, (std::vector<int64_t>{10, 10}));
  ASSERT_EQ(in->calls.size(), 2u);
  // P = 10, U = 2: micro-batch 0 holds tokens [0, 5), micro-batch 1 tokens [5, 10) (padding included).
  EXPECT_EQ(in->calls[0].row_offset, 0);
  EXPECT_EQ(in->calls[1].row_offset, 5);
  for (const CallInputs& call : in->calls) {
    EXPECT_EQ(call.num_tokens_across_dp, (std::vector<int64_t>{5, 5}));
    EXPECT_EQ(call.local_sizes, (std::vector<int64_t>{5, 5}));
    EXPECT_EQ(call.tp_gather, (std::vector<int>{-1, -1}));
  }
  EXPECT_EQ(runs_text(in->tensors[static_cast<size_t>(in->calls[1].received[0])]), "(0 0 5 5)");
  EXPECT_EQ(runs_text(in->tensors[static_cast<size_t>(in->calls[1].received[1])]), "(0 1 5 5)");
  // After the step, rows [0, 10) of each rank hold its tokens 0..9: one copy per micro-batch.
  ASSERT_EQ(in->expected.size(), 2u);
  ASSERT_EQ(in->expected[1].size(), 2u);
  EXPECT_EQ(in->expected[1][0].dst_row, 0);
  EXPECT_EQ(runs_text({in->expected[1][0].run}), "(0 1 0 5)");
  EXPECT_EQ(in->expected[1][1].dst_row, 5);
  EXPECT_EQ(runs_text({in->expected[1][1].run}), "(0 1 5 5)");
  EXPECT_FALSE(in->rejection);
  EXPECT_EQ(in->row_span, 10);
}

TEST(StepInputs, SpShardsCarryTheirTpAllGather) {
  auto c = read_case_file(kRegression + "vllm-50874-latent-one-row-sp-shard.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto in = step_inputs(*c);
  ASSERT_TRUE(in.ok()) << in.error().message;
  ASSERT_EQ(in->calls.size(), 1u);
  const CallInputs& call = in->calls[0];
  // TP rank 1 of dp 0 receives SP padding row 1; the TP all-gather returns token 0, then that padding.
  EXPECT_EQ(runs_text(in->tensors[static_cast<size_t>(call.received[1])]), "(1 0 1 1)");
  EXPECT_EQ(runs_text(in->tensors[static_cast<size_t>(call.tp_gather[1])]), "(0 0 0 1)(1 0 1 1)");
  EXPECT_EQ(call.local_sizes, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(runs_text({in->expected[1][0].run}), "(0 0 0 1)");
}

TEST(StepInputs, ARejectedStepExpectsNoRows) {
  auto c = case_from_json_text(R"({"format": "r3fuzz-case/1", "topology": {"dp": 2, "tp": 1, "ep": false, "sp": false},
    "model": {"layers": 1, "top_k": 1, "experts": 8}, "max_num_tokens": 4, "tokens": [2, 3], "padding": "none",
    "path": "gathered", "layer": 0, "metadata": {"num_tokens_across_dp": [2, 4]}})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto in = step_inputs(*c);
  ASSERT_TRUE(in.ok()) << in.error().message;
  ASSERT_TRUE(in->rejection);
  EXPECT_TRUE(in->expected.empty());
  EXPECT_EQ(in->calls[0].num_tokens_across_dp, (std::vector<int64_t>{2, 4}));
}

// SGLang (S3's reproducer: attn-TP 2, DeepEP, one request aligned to 2 rows): TP rank 1's slice is
// the padding row, yet every rank publishes the DP rank's real tokens, so both expect token (0, 0).
TEST(StepInputs, SglangRanksExpectTheirDpRanksRealTokens) {
  auto c = read_case_file(kRegression + "sglang-capacity-buffer-rows.json");
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto in = step_inputs(*c);
  ASSERT_TRUE(in.ok()) << in.error().message;
  ASSERT_EQ(in->calls.size(), 1u);
  EXPECT_EQ(runs_text(in->tensors[static_cast<size_t>(in->calls[0].received[1])]), "(0 0 1 1)");  // padding row 1
  EXPECT_EQ(runs_text(in->tensors[static_cast<size_t>(in->calls[0].tp_gather[1])]), "(0 0 0 2)");  // the attn-TP gather
  ASSERT_EQ(in->expected.size(), 2u);
  for (const auto& rank : in->expected) {
    ASSERT_EQ(rank.size(), 1u);
    EXPECT_EQ(rank[0].dst_row, 0);
    EXPECT_EQ(runs_text({rank[0].run}), "(0 0 0 1)");
  }
}

}  // namespace
}  // namespace r3
