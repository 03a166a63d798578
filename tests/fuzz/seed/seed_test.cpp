#include "fuzz/seed/seed.hpp"

#include <set>

#include <gtest/gtest.h>

#include "fuzz/engines/vllm/deployment.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

// Qwen3-235B-A22B with TP4 DP2 EP and SP, as in docs/FUZZING.md, "Seeding from production".
constexpr const char* kQwen = R"({
  "format": "r3fuzz-deployment/1",
  "name": "qwen3-tp4-dp2",
  "note": "Qwen3-235B-A22B, TP4 DP2 EP",
  "topology": {"dp": 2, "tp": 4, "ep": true, "sp": true},
  "model": {"layers": 94, "top_k": 8, "experts": 128},
  "max_num_tokens": 8192,
  "path": "sp_shard",
  "cudagraph": "vllm-default",
  "traffic": {"decode_batches": [6, 17], "prefill_lengths": [8191]}
})";

Deployment qwen() {
  auto d = deployment_from_json_text(kQwen);
  EXPECT_TRUE(d) << d.error().message;
  return *d;
}

TEST(Deployment, ReadsEveryField) {
  const Deployment d = qwen();
  EXPECT_EQ(d.name, "qwen3-tp4-dp2");
  EXPECT_EQ(d.engine, Engine{});  // no "engine": the default engine's
  EXPECT_EQ(default_profile_of(d), kDefaultProfile);
  ASSERT_TRUE(d.fields.get<VllmDeployment>());
  const VllmDeployment& v = vllm_deployment_of(d);
  EXPECT_EQ(v.topology, (Topology{2, 4, true, true}));
  EXPECT_EQ(v.model, (ModelShape{94, 8, 128}));
  EXPECT_EQ(v.path, Path::sp_shard);
  ASSERT_EQ(v.cudagraph_sizes.size(), 67u);
  EXPECT_EQ(v.cudagraph_sizes.back(), 512);
  EXPECT_EQ(v.decode_batches, (std::pair<int64_t, int64_t>{6, 17}));
  EXPECT_EQ(deployment_case(d).note, "Qwen3-235B-A22B, TP4 DP2 EP");
  EXPECT_EQ(deployment_case(d).layer, 93);  // the last layer
}

TEST(Deployment, NamesWhatIsWrong) {
  EXPECT_EQ(deployment_from_json_text(R"({"format": "r3fuzz-deployment/1", "name": "x", "speed": 1})").error().message,
            "deployment: unknown key \"speed\" (allowed: format, engine, name, note, topology, model, max_num_tokens, "
            "path, monolithic, cudagraph, traffic)");
  EXPECT_EQ(deployment_from_json_text(
                R"({"format": "r3fuzz-deployment/1", "name": "x", "traffic": {"decode_batches": [5, 2]}})").error().message,
            "traffic.decode_batches: expected [lo, hi] with 0 <= lo <= hi");
  // The shared labels are read first, as for every engine: a missing format is named before the rest.
  EXPECT_EQ(deployment_from_json_text(R"({"name": "x", "speed": 1})").error().message,
            "format: missing (expected \"r3fuzz-deployment/1\")");
  auto bad_sp = deployment_from_json_text(R"({"format": "r3fuzz-deployment/1", "name": "x",
      "topology": {"dp": 2, "tp": 1, "ep": true, "sp": true},
      "model": {"layers": 1, "top_k": 1, "experts": 1}, "max_num_tokens": 8, "path": "gathered",
      "traffic": {"prefill_lengths": [8]}})");
  ASSERT_FALSE(bad_sp);
  EXPECT_EQ(bad_sp.error().message, "topology.sp: sequence parallel needs tp > 1, tp is 1");
  // Issue 15: the format is required, the name is a safe file-name stem, traffic stays within M.
  EXPECT_EQ(deployment_from_json_text(R"({"name": "x", "traffic": {"prefill_lengths": [8]}})").error().message,
            "format: missing (expected \"r3fuzz-deployment/1\")");
  EXPECT_EQ(deployment_from_json_text(R"({"format": "r3fuzz-deployment/1", "name": "../x"})").error().message,
            "name: character 3 is not allowed (use letters, digits, '-', '_' and '.': it names the files r3fuzz writes)");
  EXPECT_EQ(deployment_from_json_text(R"({"format": "r3fuzz-deployment/1", "name": "x",
      "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false}, "model": {"layers": 1, "top_k": 1, "experts": 1},
      "max_num_tokens": 8, "path": "gathered", "traffic": {"decode_batches": [1, 9]}})")
                .error()
                .message,
            "traffic.decode_batches: 9 is above max_num_tokens 8");
}

TEST(Traffic, DecodeStepsStraddleTheCaptureSizesAndPrefillStepsSitNearM) {
  auto cases = cases_from_traffic(qwen());
  ASSERT_TRUE(cases) << cases.error().message;
  // Decode targets in [6, 17]: 6 and 17 (the range ends), 7 8 9 (around 8), 15 16 17 (around 16).
  std::set<int64_t> decode_most;
  int prefill = 0;
  for (const Case& c : *cases) {
    EXPECT_TRUE(validate(c));
    EXPECT_EQ(c.layer, 93);
    if (c.padding.mode == PaddingMode::cudagraph) decode_most.insert(c.tokens[0]);
    else ++prefill;
  }
  EXPECT_EQ(decode_most, (std::set<int64_t>{6, 7, 8, 9, 15, 16, 17}));
  EXPECT_EQ(prefill, 2);
  EXPECT_EQ(cases->back().tokens, (std::vector<int64_t>{8191, 8190}));
}

TEST(MetadataLog, TurnsConsistentLinesIntoCasesAndReportsTheOthersByLine) {
  const std::string log =
      R"({"step": 1, "num_tokens_across_dp": [5, 3], "local_sizes": [2, 2, 2, 2, 1, 1, 1, 1]})" "\n"
      "\n"
      R"({"step": 2, "num_tokens_across_dp": [5, 3], "local_sizes": [2, 2, 1]})" "\n"
      R"({"step": 3, "num_tokens_across_dp": [5]})" "\n"
      R"({"step": 4, "num_tokens_across_dp": [9000, 1]})" "\n"
      R"({"step": 5, "num_tokens_across_dp": [4, 4], "local_sizes": null})" "\n"
      "not json\n"
      R"({"step": 7, "num_tokens_across_dp": [5, 3], "local_sizes": [2, 2, 2, 2, 1, 1, 1, 2]})" "\n";
  std::vector<std::string> errors;
  const std::vector<Case> cases = cases_from_metadata_log(qwen(), log, errors);
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "line 3: local_sizes has 3 entries, expected 8 (dp*tp with sp)",
                        "line 4: num_tokens_across_dp has 1 entries, expected 2 (dp)",
                        "line 5: num_tokens_across_dp[0] = 9000 is outside [0, 8192] (max_num_tokens of the deployment)",
                        "line 7: invalid JSON: parse error at line 1, column 2: syntax error while parsing value - "
                        "invalid literal; last read: 'no'",
                        "line 8: local_sizes[7] = 2, expected 1 (ceil(n_d/tp) of num_tokens_across_dp)",
                    }));
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].tokens, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(cases[0].note, "metadata log line 1; Qwen3-235B-A22B, TP4 DP2 EP");
  auto step = derive_step(cases[0]);
  ASSERT_TRUE(step);
  EXPECT_FALSE(step->rejection);
  // local_sizes null: the engine never set it; the reference expects every implementation to reject.
  ASSERT_TRUE(cases[1].metadata);
  EXPECT_TRUE(cases[1].metadata->local_sizes_given);
  EXPECT_FALSE(cases[1].metadata->local_sizes);
}

TEST(Dedup, CanonicalKeyIgnoresNotesAndNamesFilesByIt) {
  Case a = deployment_case(qwen());
  Case b = a;
  b.note = "another note";
  EXPECT_EQ(canonical_key(a), canonical_key(b));
  EXPECT_EQ(seed_file_name("q", a), seed_file_name("q", b));
  b.tokens[0] = 1;
  EXPECT_NE(seed_file_name("q", a), seed_file_name("q", b));
  EXPECT_EQ(seed_file_name("q", a).size(), std::string("q-0123456789abcdef.json").size());
}

// kQwen with its "traffic" (and, when given, "cudagraph") replaced.
std::string qwen_with(const std::string& traffic, const std::string& cudagraph = "\"vllm-default\"") {
  std::string text = kQwen;
  const auto replace = [&](const std::string& key, const std::string& value) {
    const size_t at = text.find("\"" + key + "\": ") + key.size() + 4;
    const size_t end = text.find(key == "traffic" ? "\n}" : ",\n", at);
    text.replace(at, end - at, value);
  };
  replace("traffic", traffic);
  replace("cudagraph", cudagraph);
  return text;
}

std::string error_of(const std::string& deployment) {
  auto d = deployment_from_json_text(deployment);
  return d ? "(no error)" : d.error().message;
}

// A list of `n` integers, 1 2 .. n, as JSON.
std::string ints(int n, int from = 1) {
  std::string text = "[";
  for (int i = 0; i < n; ++i) text += (i ? ", " : "") + std::to_string(from + i);
  return text + "]";
}

TEST(Deployment, EveryListIsBoundedBeforeItIsCopied) {
  EXPECT_EQ(error_of(qwen_with(R"({"prefill_lengths": )" + ints(8193) + "}")),
            "traffic.prefill_lengths: 8193 entries, at most 8192 (each seeds two cases or more; a deployment seeds at "
            "most 16384)");
  EXPECT_EQ(error_of(qwen_with(R"({"decode_batches": [1, 2, 3]})")),
            "traffic.decode_batches: 3 entries, at most 2 (expected [lo, hi])");
  EXPECT_EQ(error_of(qwen_with(R"({"prefill_lengths": [8]})", ints(1025))), "cudagraph: 1025 entries, at most 1024");
  EXPECT_EQ(error_of(qwen_with(R"({"prefill_lengths": [18446744073709551615]})")),
            "traffic.prefill_lengths[0]: 18446744073709551615 is out of range for a 64-bit integer");
}

TEST(Deployment, TrafficOfMoreCasesThanTheBoundIsRefusedWhenRead) {
  // 1024 capture sizes 1..1024 in [1, 1025]: 1025 decode targets; 7680 lengths: 15360 prefill steps.
  const std::string many = qwen_with(R"({"decode_batches": [1, 1025], "prefill_lengths": )" + ints(7680) + "}", ints(1024));
  EXPECT_EQ(error_of(many),
            "traffic: seeds 16385 cases (1025 decode and 15360 prefill steps), at most 16384 (fewer prefill_lengths, "
            "or a narrower decode range)");
  // One length fewer fits exactly; the count is made without making the cases, and agrees.
  auto fits = deployment_from_json_text(qwen_with(R"({"decode_batches": [1, 1024], "prefill_lengths": )" + ints(7680) + "}", ints(1024)));
  ASSERT_TRUE(fits) << fits.error().message;
  EXPECT_EQ(count_traffic_cases(*fits), 1024 + 15360);
}

TEST(Traffic, CountedAsMadeAndMadeOneAtATime) {
  const Deployment d = qwen();
  auto cases = cases_from_traffic(d);
  ASSERT_TRUE(cases);
  EXPECT_EQ(count_traffic_cases(d), static_cast<int64_t>(cases->size()));
  // The visitor sees them in order and its error stops the rest.
  std::vector<Case> seen;
  const Status stopped = for_each_traffic_case(d, [&](Case c) -> Status {
    seen.push_back(std::move(c));
    if (seen.size() == 3) return Error{"enough"};
    return ok_status();
  });
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().message, "enough");
  ASSERT_EQ(seen.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(seen[i], (*cases)[i]);
}

TEST(MetadataLog, ListsLongerThanAnyDeploymentsAreRefusedAndStepIsACount) {
  const std::string too_many = R"({"num_tokens_across_dp": )" + ints(1025) + "}\n";
  const std::string local = R"({"num_tokens_across_dp": [1, 1], "local_sizes": )" + ints(65537) + "}\n";
  std::vector<std::string> errors;
  EXPECT_TRUE(cases_from_metadata_log(qwen(), too_many + local + R"({"step": -1, "num_tokens_across_dp": [1, 1]})" "\n" +
                                                  R"({"step": "seven", "num_tokens_across_dp": [1, 1]})" "\n",
                                      errors)
                  .empty());
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "line 1: num_tokens_across_dp: 1025 entries, at most 1024 (one count per DP rank)",
                        "line 2: local_sizes: 65537 entries, at most 65536 (one per rank of dp*tp)",
                        "line 3: step: -1 is out of range [0, 9223372036854775807]",
                        "line 4: step: expected an integer",
                    }));
}

}  // namespace
}  // namespace r3
