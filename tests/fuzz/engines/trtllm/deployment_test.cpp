// TensorRT-LLM deployments as seeds (fuzz/engines/trtllm/deployment.cpp): the LLM API's options
// read into a one-rank base case, the traffic's exact cases, the captured sizes that never pad a
// batch dropped, and every bad key named.
#include "fuzz/engines/trtllm/deployment.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fuzz/seed/engine_seed.hpp"
#include "fuzz/seed/seed.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"
#include "tests/support/deployment_text.hpp"

namespace r3 {
namespace {

constexpr const char* kSmall = R"({
  "format": "r3fuzz-deployment/1",
  "engine": "trtllm",
  "name": "small-trtllm",
  "note": "a small TensorRT-LLM deployment",
  "tensor_parallel_size": 2,
  "model": {"layers": 3, "top_k": 2, "experts": 8},
  "max_num_tokens": 16,
  "max_batch_size": 6,
  "cuda_graph_config": {"enable_padding": true, "batch_sizes": [1, 4, 8]},
  "traffic": {"decode_batches": [2, 6], "prefill_lengths": [16]}
})";

// `text` (kSmall by default) with `key`'s value replaced (or the key added).
std::string with(const std::string& key, const std::string& value, const std::string& text = kSmall) {
  return test::with_key(text, key, value);
}

// Each traffic case as "rows/padding sizes".
std::vector<std::string> traffic(const std::string& text) {
  return test::seeded_traffic(text, Profile::of(trtllm::engine(), 0), [](const Case& c) {
    std::string sizes;
    for (int64_t b : c.padding.cudagraph_sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(b);
    return std::to_string(c.tokens.at(0)) + "/" + sizes;
  });
}

TEST(TrtllmDeployment, ReadsTheOptionsIntoAOneRankBaseCase) {
  auto d = deployment_from_json_text(kSmall);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->engine, trtllm::engine());
  EXPECT_EQ(default_profile_of(*d), Profile::of(trtllm::engine(), 0));
  const Case c = trtllm::trtllm_deployment_case(*d);
  EXPECT_EQ(c.engine, trtllm::engine());
  EXPECT_EQ(c.topology, (Topology{1, 2, false, false}));
  EXPECT_EQ(c.model, (ModelShape{3, 2, 8}));
  EXPECT_EQ(c.max_num_tokens, 16);
  EXPECT_EQ(c.layer, 2);
  EXPECT_EQ(c.note, "a small TensorRT-LLM deployment");
  // 8 is above max_batch_size 6: it never pads a batch (CUDAGraphRunner._get_padded_batch).
  EXPECT_EQ(trtllm::trtllm_deployment_of(*d).padded_batch_sizes, (std::vector<int64_t>{1, 4}));
}

TEST(TrtllmDeployment, DecodeStepsStraddleEachPaddedSizeAndContextStepsRunUnpadded) {
  EXPECT_EQ(traffic(kSmall), (std::vector<std::string>{"2/1,4", "3/1,4", "4/1,4", "5/1,4", "6/1,4", "16/"}));
  // Padding off: a batch runs a graph of its own size only, so no step gains a row.
  EXPECT_EQ(traffic(with("cuda_graph_config", R"({"batch_sizes": [1, 4, 8]})")),
            (std::vector<std::string>{"2/", "6/", "16/"}));
}

TEST(TrtllmDeployment, EveryBadKeyIsNamed) {
  EXPECT_EQ(test::deployment_error(with("pipeline_parallel_size", "2")),
            "deployment: unknown key \"pipeline_parallel_size\" (allowed: format, engine, name, note, "
            "tensor_parallel_size, model, max_num_tokens, max_batch_size, cuda_graph_config, traffic)");
  EXPECT_EQ(test::deployment_error(with("cuda_graph_config", R"({"batch_sizes": [4, 2], "enable_padding": true})")),
            "cuda_graph_config.batch_sizes[1]: expected increasing sizes of at least 1");
  EXPECT_EQ(test::deployment_error(with("cuda_graph_config", R"({"enable_padding": "yes", "batch_sizes": [1]})")),
            "cuda_graph_config.enable_padding: expected true or false");
  EXPECT_EQ(test::deployment_error(with("traffic", R"({"decode_batches": [1, 7]})")),
            "traffic.decode_batches: 7 is above max_batch_size and max_num_tokens (6)");
  EXPECT_EQ(test::deployment_error(with("traffic", R"({"prefill_lengths": [17]})")),
            "traffic.prefill_lengths[0]: 17 is outside [1, 16] (max_num_tokens)");
  EXPECT_EQ(test::deployment_error(with("model", R"({"layers": 3, "top_k": 9, "experts": 8})")),
            "model.top_k: 9 is above model.experts");
  EXPECT_EQ(test::deployment_error(with("model", R"({"layers": 3, "top_k": 2, "experts": 8, "shared": 1})")),
            "model: unknown key \"shared\" (allowed: layers, top_k, experts)");
}

TEST(TrtllmDeployment, AMetadataLogIsRefusedWithTheReason) {
  auto d = deployment_from_json_text(kSmall);
  ASSERT_TRUE(d);
  const EngineSeed* part = engine_seed(trtllm::engine());
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(part->log_refusal(), "a TensorRT-LLM deployment runs one rank (profile trtllm): there is no DP metadata to log");
}

}  // namespace
}  // namespace r3
