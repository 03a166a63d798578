// End-to-end tests of `r3fuzz explain`: the real binary (R3FUZZ_BINARY), its exit codes,
// its --json schema (issue 2's field names) and its messages for bad input.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Output = r3::test::BinaryRun;

class Explain : public ::testing::Test {
 protected:
  // Runs r3fuzz with `args` (already shell-quoted where needed).
  Output run(const std::string& args) { return r3::test::run_binary_command_line(R3FUZZ_BINARY, args, dir_); }

  std::string write_case(const std::string& name, const std::string& text) {
    return scratch_.write(name, text).string();
  }

  const r3::test::ScratchDir scratch_{"r3fuzz-explain"};
  const fs::path dir_ = scratch_.path();
};

const std::string kProduction = std::string(R3FUZZ_SOURCE_DIR) + "/corpus/production/vllm-50874-gb200-tp2-dp2.json";

std::string small_case(const std::string& topology, const std::string& tokens, const std::string& path,
                       const std::string& extra = "") {
  return R"({"format": "r3fuzz-case/1", "topology": )" + topology +
         R"(, "model": {"layers": 4, "top_k": 2, "experts": 64}, "max_num_tokens": 16, "tokens": )" + tokens +
         R"(, "padding": "none", "path": ")" + path + R"(", "layer": 1)" + extra + "}";
}

TEST_F(Explain, ProductionCaseTablesAndDecisions) {
  const Output o = run("explain '" + kProduction + "'");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_NE(o.out.find("gathered layout (all-gatherv over the EP group, rank d*T+t): G = 16384 rows, local_sizes "
                       "[4096, 4096, 4096, 4096]"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("vllm-pre-50874: capacity (failure): replay buffer has 8192 rows, the gathered batch the "
                       "monolithic kernel processes has 16384"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("  vllm-50874: pass\n    capture buffer 8192 rows, replay buffer 32768 rows\n"),
            std::string::npos)
      << o.out;
}

TEST_F(Explain, JsonSchemaOnTheProductionCase) {
  const Output o = run("explain '" + kProduction + "' --json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = json::parse(o.out);
  EXPECT_EQ(j["num_tokens_across_dp"], json({8192, 8192}));
  EXPECT_EQ(j["local_sizes"], json({4096, 4096, 4096, 4096}));
  EXPECT_EQ(j["gathered_rows"], 16384);
  EXPECT_EQ(j["capture_rows_needed"], 8192);
  EXPECT_EQ(j["capture_rows_allocated"], 8192);
  EXPECT_EQ(j["replay_rows_needed"], 16384);
  ASSERT_EQ(j["ranks"].size(), 4u);
  EXPECT_EQ(j["ranks"][2], json({{"dp", 1}, {"tp", 0}, {"n", 16384}, {"expected", {8192, 16384}}}));

  const json& post = j["policies"]["vllm-50874"];
  EXPECT_EQ(post["replay_rows_allocated"], 32768);
  EXPECT_EQ(post["verdict"], "pass");
  EXPECT_TRUE(post["severity"].is_null());
  ASSERT_EQ(post["ranks"].size(), 4u);
  EXPECT_EQ(post["ranks"][3]["dp"], 1);
  EXPECT_EQ(post["ranks"][3]["tp"], 1);
  EXPECT_EQ(post["ranks"][3]["branch"], "naive_total");
  EXPECT_EQ(post["ranks"][3]["rows"], json({8192, 16384}));
  EXPECT_EQ(post["ranks"][3]["verdict"], "pass");

  const json& pre = j["policies"]["vllm-pre-50874"];
  EXPECT_EQ(pre["replay_rows_allocated"], 8192);
  EXPECT_EQ(pre["verdict"], "capacity");
  EXPECT_EQ(pre["severity"], "failure");
  EXPECT_EQ(j["policies"]["r3-fixed"]["verdict"], "pass");
}

TEST_F(Explain, NoDpMetadataGivesNulls) {
  const Output o =
      run("explain --json '" + write_case("single.json", small_case(R"({"dp": 1, "tp": 2, "ep": false, "sp": false})", "[5]", "single")) + "'");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = json::parse(o.out);
  EXPECT_TRUE(j["local_sizes"].is_null());
  EXPECT_TRUE(j["gathered_rows"].is_null());
  EXPECT_TRUE(j["replay_rows_needed"].is_null());
  EXPECT_TRUE(j["policies"]["vllm-50874"]["replay_rows_allocated"].is_null());
  EXPECT_EQ(j["ranks"][1], json({{"dp", 0}, {"tp", 1}, {"n", 5}, {"expected", {0, 5}}}));
  EXPECT_EQ(j["policies"]["vllm-50874"]["ranks"][1]["branch"], "single");
}

TEST_F(Explain, LatentOneRowShard) {  // corner case 2 (docs/layout-contract.md section 8)
  const Output o = run("explain --json '" +
                       write_case("latent.json", small_case(R"({"dp": 2, "tp": 2, "ep": true, "sp": true})", "[1, 4]", "sp_shard")) +
                       "'");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = json::parse(o.out);
  const json& post = j["policies"]["vllm-50874"];
  EXPECT_EQ(post["verdict"], "wrong_rows");
  EXPECT_EQ(post["severity"], "latent");
  EXPECT_EQ(post["ranks"][1]["branch"], "local");
  EXPECT_EQ(post["ranks"][1]["rows"], json({0, 1}));
  EXPECT_EQ(post["ranks"][1]["verdict"], "wrong_rows");
  EXPECT_EQ(post["ranks"][2]["branch"], "sp_allgather");
  EXPECT_EQ(j["ranks"][1], json({{"dp", 0}, {"tp", 1}, {"n", 1}, {"expected", {0, 1}}}));
}

// docs/layout-contract.md 9.1: every call is shown, with its tokens, metadata and each rank's branch.
TEST_F(Explain, EveryCallOfAMicrobatchedStep) {
  const std::string path = write_case(
      "ubatch.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 2, "tp": 1, "ep": false, "sp": false},
      "model": {"layers": 4, "top_k": 2, "experts": 64}, "max_num_tokens": 16, "tokens": [10, 7],
      "padding": "dp_max", "path": "local", "layer": 1, "microbatches": 2})");
  const Output o = run("explain --json '" + path + "'");
  ASSERT_EQ(o.exit_code, 0) << o.err;  // a valid case exits 0 whatever the verdicts
  const json j = json::parse(o.out);
  ASSERT_EQ(j["calls"].size(), 2u);
  const json& second = j["calls"][1];
  EXPECT_EQ(second["tokens"], json({{5, 10}, {5, 10}}));
  EXPECT_EQ(second["num_tokens_across_dp"], json({5, 5}));
  EXPECT_EQ(second["local_sizes"], json({5, 5}));
  EXPECT_EQ(second["ranks"][1]["n"], 5);
  EXPECT_EQ(second["branches"]["vllm-50874"], json({"local", "local"}));
  EXPECT_TRUE(j["ranks"][0]["n"].is_null());  // several calls: see "calls"
  EXPECT_EQ(j["policies"]["vllm-50874"]["verdict"], "wrong_rows");
  EXPECT_EQ(j["policies"]["vllm-50874"]["severity"], "failure");
  EXPECT_EQ(j["policies"]["r3-fixed"]["verdict"], "pass");

  const Output text = run("explain '" + path + "'");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("call 2 of 2: dp 0 tokens [5, 10), dp 1 tokens [5, 10)\n  num_tokens_across_dp [5, 5], "
                          "local_sizes [5, 5]\n"),
            std::string::npos)
      << text.out;
}

// docs/layout-contract.md 9.2: n = [5, 3], T = 2, C = 2: each TP rank's share is 3 and 2 rows; dp 1 finishes after one chunk.
TEST_F(Explain, DpChunksShowTheirRowsAndEachRanksBranch) {
  const std::string path = write_case(
      "chunks.json", small_case(R"({"dp": 2, "tp": 2, "ep": true, "sp": true})", "[5, 3]", "sp_shard", R"(, "dp_chunk": 2)"));
  const Output o = run("explain --json '" + path + "'");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = json::parse(o.out);
  ASSERT_EQ(j["calls"].size(), 2u);
  const json& second = j["calls"][1];
  EXPECT_EQ(second["chunk_rows"], json({{2, 3}, {2, 2}}));
  EXPECT_FALSE(second.contains("tokens"));
  EXPECT_EQ(second["num_tokens_across_dp"], json({5, 3}));
  EXPECT_EQ(second["local_sizes"], json({1, 1, 1, 1}));
  EXPECT_EQ(second["branches"]["r3-fixed"], json({"sp_allgather", "sp_allgather", "skip", "skip"}));
  EXPECT_EQ(j["calls"][0]["branches"]["vllm-50874"], json({"error", "error", "sp_allgather", "sp_allgather"}));
  EXPECT_EQ(j["policies"]["vllm-50874"]["verdict"], "spurious_reject");
  EXPECT_EQ(j["policies"]["r3-fixed"]["verdict"], "pass");
}

TEST_F(Explain, InvalidCaseNamesTheField) {
  const std::string path = write_case(
      "bad.json", small_case(R"({"dp": 2, "tp": 1, "ep": false, "sp": false})", "[3, 2, 1]", "gathered"));
  const Output o = run("explain '" + path + "'");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err, "r3fuzz explain: " + path + ": tokens: has 3 entries, topology.dp is 2 (one count per DP rank)\n");
}

TEST_F(Explain, WrongTypeAndUnknownKey) {
  const std::string typed = write_case(
      "typed.json", small_case(R"({"dp": "2", "tp": 1, "ep": false, "sp": false})", "[3, 2]", "gathered"));
  EXPECT_EQ(run("explain '" + typed + "'").err,
            "r3fuzz explain: " + typed + ": topology.dp: expected an integer, got string\n");
  const std::string unknown = write_case(
      "unknown.json", small_case(R"({"dp": 2, "tp": 1, "ep": false, "sp": false})", "[3, 2]", "gathered", R"(, "seed": 1)"));
  const Output o = run("explain '" + unknown + "'");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find(unknown + ": case: unknown key \"seed\" (allowed: "), std::string::npos) << o.err;
}

TEST_F(Explain, MissingAndMalformedFiles) {
  const std::string missing = (dir_ / "missing.json").string();
  const Output o = run("explain '" + missing + "'");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz explain: " + missing + ": cannot open: No such file or directory\n");
  const std::string broken = write_case("broken.json", "{\"format\": ");
  const Output b = run("explain '" + broken + "'");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find(broken + ": invalid JSON: parse error at line 1, column 12"), std::string::npos) << b.err;
}

TEST_F(Explain, UsageErrorsExitTwoHelpExitsZero) {
  const Output none = run("explain");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("case is required"), std::string::npos) << none.err;
  EXPECT_EQ(run("").exit_code, 2);
  EXPECT_EQ(run("explain '" + kProduction + "' --bogus").exit_code, 2);
  const Output help = run("explain --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--json"), std::string::npos);
}

}  // namespace
