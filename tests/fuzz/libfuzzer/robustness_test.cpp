#include "fuzz/libfuzzer/robustness.hpp"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

std::vector<uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

Case small_case() {
  return test::with_model_at_layer(test::make_case(test::kDp2Tp2EpSp, 4, {3, 1}, Path::gathered), {2, 1, 8}, 0);
}

TEST(Robustness, CountsTheDecodersThatAcceptAnInput) {
  // A small binary case decodes under both limits, and (like most inputs of 3 bytes or more) as
  // a metadata record too; JSON text is JSON and a metadata record.
  EXPECT_EQ(exercise_decoders(case_to_binary(small_case())), 3);
  EXPECT_EQ(exercise_decoders(bytes_of(case_to_json_text(small_case()))), 2);
  EXPECT_EQ(exercise_decoders(bytes_of("")), 0);
  // Metadata record: base case 0 (SP, gathered, tokens [5, 3]); num_tokens_across_dp [5, 3];
  // local_sizes given, 4 entries [3, 3, 2, 2]: exactly the derived layout, so accepted.
  const std::vector<uint8_t> metadata = {0, 0x07, 0x42, 5, 3, 3, 3, 2, 2};
  EXPECT_EQ(exercise_decoders(metadata), 1);
}

TEST(Robustness, RendersTheAllIdleChunkedStepThatCrashedExplain) {
  // Issue 15 item 0: explain --json read calls.front() of a step with no call; the target now
  // renders every case it decodes within the concrete limits (dp_chunk 64 here, the issue's 100
  // is beyond them: no chunk either way), so it would crash here if that came back.
  const std::string idle = R"({"format": "r3fuzz-case/1", "topology": {"dp": 2, "tp": 2, "ep": true, "sp": false},
    "model": {"layers": 2, "top_k": 1, "experts": 256}, "max_num_tokens": 2, "tokens": [0, 0],
    "padding": "none", "path": "local", "layer": 0, "dp_chunk": 64})";
  // The JSON case reader, and (as most inputs of 3 bytes or more) a metadata record.
  EXPECT_EQ(exercise_decoders(bytes_of(idle)), 2);
}

TEST(Robustness, RendersAnSglangCaseItDecodes) {
  // Found by the CI fuzz smoke (2026-12-01): this binary SGLang case (version 2) aborted the
  // target, which read vLLM's "ranks" from SGLang's explain --json ("dp_ranks" and each model's ranks).
  const std::vector<uint8_t> sglang = {0x2, 0x0, 0x2, 0x38, 0x0, 0x0, 0x2, 0x38, 0x38, 0x0, 0x0, 0x38};
  const auto decoded = case_from_binary(sglang);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->engine, sglang::engine());
  EXPECT_GE(exercise_decoders(sglang), 1);
}

// Each also reads as a metadata record (the second 1 below).
TEST(Robustness, CoversDeploymentsLogsAndAdapterReplies) {
  EXPECT_EQ(exercise_decoders(bytes_of(R"({"format": "r3fuzz-deployment/1", "name": "d",
    "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false}, "model": {"layers": 4, "top_k": 2, "experts": 64},
    "max_num_tokens": 16, "path": "gathered", "traffic": {"prefill_lengths": [4]}})")),
            1 + 1);
  // A log line for the target's built-in deployment (dp 2, tp 2, sp): one case.
  EXPECT_EQ(exercise_decoders(bytes_of(R"({"num_tokens_across_dp": [3, 1], "local_sizes": [2, 2, 1, 1]})")), 1 + 1);
  // An adapter's hello: read as a hello, and as a reply without an id it is nothing else.
  EXPECT_EQ(exercise_decoders(bytes_of(
                R"({"type": "hello", "protocol": "r3fuzz-adapter/1", "name": "x", "version": "1"})")),
            1 + 1);
}

// Deterministic random inputs: the fuzz target runs this body under libFuzzer; here it must
// simply come back for every input.
TEST(Robustness, SurvivesRandomAndEditedInputs) {
  std::mt19937_64 rng(2026);
  const std::vector<uint8_t> seeds[] = {case_to_binary(small_case()), bytes_of(case_to_json_text(small_case()))};
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint8_t> bytes = seeds[i % 2];
    for (int e = 0; e < 3; ++e) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    accepted += exercise_decoders(bytes) > 0;
    std::vector<uint8_t> noise(rng() % 40);
    for (auto& b : noise) b = static_cast<uint8_t>(rng());
    accepted += exercise_decoders(noise) > 0;
  }
  EXPECT_GT(accepted, 100);
}

}  // namespace
}  // namespace r3
