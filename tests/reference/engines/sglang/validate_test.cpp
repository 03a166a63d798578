// The rules an SGLang case obeys (reference/engines/sglang/validate.cpp; docs/layout-contract.md
// section 11.2): each one's error text, and the fields only vLLM cases take.
#include "reference/engines/sglang/validate.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "reference/engines/vllm/model.hpp"
#include "reference/validate.hpp"
#include "tests/support/sglang_fixtures.hpp"

namespace r3::sglang {
namespace {

std::string error_of(const Case& c) {
  const Status s = sglang::validate(c);
  return s.ok() ? "" : s.error().message;
}

// `c` with `edit` applied.
Case edited(Case c, const std::function<void(Case&)>& edit) {
  edit(c);
  return c;
}

TEST(SglangValidate, TheFixturesAreValid) {
  EXPECT_EQ(error_of(test::sglang_issue_example()), "");
  EXPECT_EQ(error_of(test::sglang_extend(1, 4, {16}, A2a::nixl)), "");
  EXPECT_EQ(error_of(test::sglang_decode(3, 1, {4, 0, 1})), "");
  // The engine-wide validate() dispatches to these rules.
  EXPECT_TRUE(r3::validate(test::sglang_issue_example()).ok());
}

TEST(SglangValidate, ACaseWithoutItsForwardIsRefused) {
  Case c = test::sglang_extend(1, 1, {1});
  c.engine_fields.reset();
  EXPECT_EQ(error_of(c), "engine: an SGLang case needs its forward (topology.dp_attention, forward, ...)");
  Case other = test::sglang_extend(1, 1, {1});
  other.engine = vllm::engine();
  EXPECT_EQ(r3::validate(other).error().message, "engine: a vllm case carries another engine's fields");
}

TEST(SglangValidate, DpAttentionAndDpGoTogether) {
  EXPECT_EQ(error_of(edited(test::sglang_extend(1, 2, {1}), [](Case& c) { sglang::forward_of(c)->dp_attention = true; })),
            "topology.dp_attention: needs dp > 1 (server_args.py: DP attention runs dp > 1 attention-DP ranks)");
  EXPECT_EQ(error_of(edited(test::sglang_extend(2, 2, {1, 1}), [](Case& c) { sglang::forward_of(c)->dp_attention = false; })),
            "topology.dp: 2 attention-DP ranks need dp_attention true (without DP attention dp is 1)");
  EXPECT_EQ(error_of(edited(test::sglang_extend(1, 1, {1}), [](Case& c) { c.topology.dp = 0; })),
            "topology.dp: 0 is out of range [1, 1024]");
}

TEST(SglangValidate, CountsAreOnePerRankWithinTheirBound) {
  EXPECT_EQ(error_of(test::sglang_extend(2, 1, {1})), "tokens: has 1 entries, topology.dp is 2 (one count per DP rank)");
  EXPECT_EQ(error_of(test::sglang_extend(2, 1, {1, 17})),
            "tokens[1]: 17 is out of range [0, 16] (at most chunked_prefill_size: a prefill chunk holds no more)");
  EXPECT_EQ(error_of(test::sglang_extend(2, 1, {-1, 1})),
            "tokens[0]: -1 is out of range [0, 16] (at most chunked_prefill_size: a prefill chunk holds no more)");
  Case unchunked = test::sglang_extend(1, 1, {11});
  sglang::forward_of(unchunked)->chunked_prefill_size = -1;
  sglang::forward_of(unchunked)->max_prefill_tokens = 10;
  EXPECT_EQ(error_of(unchunked), "tokens[0]: 11 is out of range [0, 10] (at most max_prefill_tokens: chunking is off)");
  unchunked.tokens = {10};
  EXPECT_EQ(error_of(unchunked), "");
  EXPECT_EQ(error_of(test::sglang_decode(2, 1, {5, 0})),
            "requests[0]: 5 is out of range [0, 4] (at most max_running_requests)");
  EXPECT_EQ(error_of(test::sglang_decode(1, 1, {1, 1})),
            "requests: has 2 entries, topology.dp is 1 (one count per DP rank)");
  EXPECT_EQ(error_of(edited(test::sglang_extend(1, 1, {1}), [](Case& c) { sglang::forward_of(c)->requests = {1}; })),
            "requests: an extend forward counts tokens per DP rank, not requests");
  EXPECT_EQ(error_of(edited(test::sglang_decode(1, 1, {1}), [](Case& c) { c.tokens = {1}; })),
            "tokens: a decode or verify forward counts requests per DP rank, not tokens");
}

TEST(SglangValidate, SizesAreInRange) {
  EXPECT_EQ(error_of(edited(test::sglang_extend(1, 1, {1}), [](Case& c) { sglang::forward_of(c)->chunked_prefill_size = 0; })),
            "chunked_prefill_size: 0 is out of range [1, 16777216]");
  EXPECT_EQ(error_of(edited(test::sglang_decode(1, 1, {0}), [](Case& c) { sglang::forward_of(c)->max_running_requests = 0; })),
            "max_running_requests: 0 is out of range [1, 16777216]");
  EXPECT_EQ(error_of(edited(test::sglang_extend(1, 1, {1}), [](Case& c) { c.layer = 2; })),
            "layer: 2 is out of range [0, 1]");
}

TEST(SglangValidate, OnlyAVerifyHasASpecWidth) {
  EXPECT_EQ(error_of(test::sglang_verify(1, 1, {1}, 1)), "spec_width: 1 is out of range [2, 64]");
  EXPECT_EQ(error_of(test::sglang_verify(1, 1, {1}, 65)), "spec_width: 65 is out of range [2, 64]");
  EXPECT_EQ(error_of(test::sglang_verify(1, 1, {1}, 64)), "");
  EXPECT_EQ(error_of(edited(test::sglang_decode(1, 1, {1}), [](Case& c) { sglang::forward_of(c)->spec_width = 2; })),
            "spec_width: only a verify forward has one (2 on decode)");
  EXPECT_EQ(error_of(edited(test::sglang_extend(1, 1, {1}), [](Case& c) { sglang::forward_of(c)->spec_width = 3; })),
            "spec_width: only a verify forward has one (3 on extend)");
}

TEST(SglangValidate, BucketsAreIncreasingAndAligned) {
  auto with_graph = [](Case c, CudaGraphs g) {
    sglang::forward_of(c)->cuda_graph = std::move(g);
    return c;
  };
  EXPECT_EQ(error_of(with_graph(test::sglang_decode(1, 1, {1}), {})),
            "cuda_graph: lists no bucket (leave it out when no graph is captured)");
  EXPECT_EQ(error_of(with_graph(test::sglang_decode(1, 1, {1}), {{2, 2}, {}})),
            "cuda_graph.decode: buckets must be strictly increasing, entry 1 (2) follows 2");
  EXPECT_EQ(error_of(with_graph(test::sglang_decode(1, 1, {1}), {{0}, {}})), "cuda_graph.decode[0]: 0 is out of range [1, 16777216]");
  EXPECT_EQ(error_of(with_graph(test::sglang_extend(1, 1, {1}), {{}, {8, 4}})),
            "cuda_graph.prefill: buckets must be strictly increasing, entry 1 (4) follows 8");
  // attn_tp 2 under DP attention aligns the decode buckets to 2; TBO doubles that.
  const std::string why =
      " (SGLang captures decode batch sizes aligned to 2 under TBO and to attn_tp when counts are aligned: "
      "utils/common.py, get_cuda_graph_batch_size_alignment)";
  EXPECT_EQ(error_of(with_graph(test::sglang_decode(2, 2, {1, 1}), {{2, 3}, {}})),
            "cuda_graph.decode[1]: 3 is not a multiple of 2" + why);
  Case tbo = with_graph(test::sglang_decode(2, 2, {1, 1}), {{2, 4}, {}});
  sglang::forward_of(tbo)->tbo = true;
  EXPECT_EQ(error_of(tbo), "cuda_graph.decode[0]: 2 is not a multiple of 4" + why);
  // Without aligned counts (no DP attention, a2a none) any bucket goes; prefill buckets never align.
  EXPECT_EQ(error_of(with_graph(test::sglang_decode(1, 2, {1}), {{1, 3}, {5}})), "");
  // A scattered backend aligns counts even without DP attention.
  EXPECT_EQ(error_of(with_graph(test::sglang_decode(1, 2, {1}, A2a::mooncake), {{3}, {}})),
            "cuda_graph.decode[0]: 3 is not a multiple of 2" + why);
  CudaGraphs many;
  for (int64_t b = 1; b <= 1025; ++b) many.decode.push_back(b);
  EXPECT_EQ(error_of(with_graph(test::sglang_decode(1, 1, {1}), many)), "cuda_graph.decode: has 1025 buckets, at most 1024");
}

TEST(SglangValidate, TheLastDecodeBucketIsACapturedOne) {
  Case c = test::sglang_issue_example();
  sglang::forward_of(c)->last_decode_bucket = 3;
  EXPECT_EQ(error_of(c), "last_decode_bucket: 3 is not one of cuda_graph.decode (a replay runs a captured bucket)");
  sglang::forward_of(c)->cuda_graph.reset();
  sglang::forward_of(c)->last_decode_bucket = 2;
  EXPECT_EQ(error_of(c), "last_decode_bucket: 2 is not one of cuda_graph.decode (a replay runs a captured bucket)");
  sglang::forward_of(c)->last_decode_bucket.reset();
  EXPECT_EQ(error_of(c), "");
}

TEST(SglangValidate, VllmOnlyFieldsAreRefusedByName) {
  const Case base = test::sglang_extend(2, 2, {1, 1});
  const std::vector<std::pair<std::string, std::function<void(Case&)>>> fields = {
      {"topology.ep", [](Case& c) { c.topology.ep = true; }},
      {"topology.sp", [](Case& c) { c.topology.sp = true; }},
      {"max_num_tokens", [](Case& c) { c.max_num_tokens = 2; }},
      {"padding", [](Case& c) { c.padding.mode = PaddingMode::dp_max; }},
      {"path", [](Case& c) { c.path = Path::gathered; }},
      {"monolithic", [](Case& c) { c.monolithic = true; }},
      {"microbatches", [](Case& c) { c.microbatches = 2; }},
      {"dp_chunk", [](Case& c) { c.dp_chunk = 1; }},
      {"metadata", [](Case& c) { c.metadata = MetadataOverride{}; }},
      {"idle_dummy", [](Case& c) { c.idle_dummy = true; }},
  };
  for (const auto& [name, edit] : fields) {
    EXPECT_EQ(error_of(edited(base, edit)),
              name + ": is a vLLM case field; an SGLang case (engine \"sglang\") does not take it");
  }
}

TEST(SglangValidate, CountsAreAlignedUnderDpAttentionOrAScatteredBackend) {
  EXPECT_TRUE(counts_aligned(test::sglang_extend(2, 1, {1, 1})));
  EXPECT_TRUE(counts_aligned(test::sglang_extend(1, 2, {1}, A2a::deepep)));
  EXPECT_FALSE(counts_aligned(test::sglang_extend(1, 1, {1}, A2a::deepep)));
  EXPECT_FALSE(counts_aligned(test::sglang_extend(1, 4, {1})));
}

}  // namespace
}  // namespace r3::sglang
