// r3fuzz seed under a profile: the cases are the steps the profile's engine runs (idle ranks'
// dummy token, CUDA-graph sizes clamped to M as vLLM clamps them) and record the profile.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* kDeployment = R"({
  "format": "r3fuzz-deployment/1",
  "name": "small-dp2",
  "note": "a small DP2 EP deployment",
  "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false},
  "model": {"layers": 4, "top_k": 2, "experts": 16},
  "max_num_tokens": 12,
  "path": "local",
  "cudagraph": "vllm-default",
  "traffic": {"decode_batches": [1, 2], "prefill_lengths": [12]}
})";

class SeedProfile : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir_ / "d.json") << kDeployment; }

  std::vector<nlohmann::json> seeded(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"seed", "--deployment", (dir_ / "d.json").string(), "--out", (dir_ / "out").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const r3::test::BinaryRun r = r3::test::run_binary(R3FUZZ_BINARY, args, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::vector<nlohmann::json> cases;
    for (const auto& e : fs::directory_iterator(dir_ / "out")) {
      cases.push_back(nlohmann::json::parse(r3::test::read_file_bytes(e.path())));
    }
    fs::remove_all(dir_ / "out");
    return cases;
  }

  const r3::test::ScratchDir scratch_{"r3fuzz-seed-profile"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(SeedProfile, CasesAreTheStepsVllmRunsAndRecordTheProfile) {
  const std::vector<nlohmann::json> cases = seeded({});
  ASSERT_EQ(cases.size(), 4u);
  int decode = 0;
  for (const nlohmann::json& c : cases) {
    EXPECT_EQ(c["profile"], "vllm");
    EXPECT_EQ(c["idle_dummy"], true);
    if (!c["padding"].is_object()) continue;
    ++decode;
    // vLLM's default sizes above M = 12 dropped, and M itself added.
    EXPECT_EQ(c["padding"]["cudagraph"], nlohmann::json({1, 2, 4, 8, 12}));
  }
  EXPECT_EQ(decode, 2);
}

TEST_F(SeedProfile, ProfileAnyKeepsTheDeploymentAsWritten) {
  for (const nlohmann::json& c : seeded({"--profile", "any"})) {
    EXPECT_EQ(c["profile"], "any");
    EXPECT_FALSE(c.contains("idle_dummy"));
    if (c["padding"].is_object()) {
      EXPECT_EQ(c["padding"]["cudagraph"].back(), 512);
    }
  }
}

}  // namespace

namespace {

// replay and explain judge any valid case, and say when it lies outside the profile it names.
TEST(CaseProfile, ReplayAndExplainSayWhyACaseLiesOutsideItsProfile) {
  const r3::test::ScratchDir scratch{"r3fuzz-case-profile"};
  const fs::path file = scratch.path() / "above-m.json";
  std::ofstream(file) << R"({"format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false},
    "model": {"layers": 1, "top_k": 1, "experts": 8}, "max_num_tokens": 1, "tokens": [1],
    "padding": {"cudagraph": [2]}, "path": "single", "layer": 0, "profile": "vllm",
    "expect": {"impl": "vllm-50874", "verdict": "capacity", "severity": "failure"}})";
  const std::string why =
      "profile vllm (named in the case): OUTSIDE it: padding.cudagraph: size 2 is above max_num_tokens 1 (vLLM "
      "clamps capture sizes to max_num_batched_tokens: vllm/config/vllm.py, VllmConfig._set_cudagraph_sizes) under "
      "profile vllm";
  const r3::test::BinaryRun replay = r3::test::run_binary(R3FUZZ_BINARY, {"replay", file.string()}, scratch.path());
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;  // judged all the same, and as expected
  EXPECT_NE(replay.out.find(file.string() + ": " + why + "\n"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find(": as expected"), std::string::npos) << replay.out;
  const r3::test::BinaryRun text = r3::test::run_binary(R3FUZZ_BINARY, {"explain", file.string()}, scratch.path());
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("\n" + why + "\n"), std::string::npos) << text.out;
  const r3::test::BinaryRun json =
      r3::test::run_binary(R3FUZZ_BINARY, {"explain", file.string(), "--json"}, scratch.path());
  const nlohmann::json profile = nlohmann::json::parse(json.out)["profile"];
  EXPECT_EQ(profile["name"], "vllm");
  EXPECT_EQ(profile["named"], true);
  EXPECT_EQ(profile["inside"], false);
  EXPECT_EQ(profile["outside_because"].get<std::string>().rfind("padding.cudagraph: size 2 is above", 0), 0u);
}

}  // namespace

namespace {

// An SGLang deployment seeds SGLang cases under its engine's default profile (sglang), or under
// --profile sglang-miles, which drops the prefill graph under DP attention; metadata logs and
// vLLM profiles are refused with the reason.
constexpr const char* kSglangDeployment = R"({
  "format": "r3fuzz-deployment/1",
  "engine": "sglang",
  "name": "small-sglang",
  "note": "a small SGLang DP-attention deployment",
  "topology": {"dp": 2, "tp": 1, "dp_attention": true, "a2a": "none"},
  "model": {"layers": 2, "top_k": 2, "experts": 16},
  "cuda_graph": {"decode": [1, 2, 4], "prefill": [16, 32]},
  "chunked_prefill_size": 32,
  "max_running_requests": 4,
  "traffic": {"decode_requests": [1, 2], "prefill_lengths": [32]}
})";

class SeedSglang : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_ / "d.json") << kSglangDeployment;
    std::ofstream(dir_ / "steps.jsonl") << R"({"num_tokens_across_dp": [1, 1]})" "\n";
  }

  r3::test::BinaryRun seed(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"seed", "--deployment", (dir_ / "d.json").string(), "--out", (dir_ / "out").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return r3::test::run_binary(R3FUZZ_BINARY, args, dir_);
  }

  std::vector<nlohmann::json> written() {
    std::vector<nlohmann::json> cases;
    for (const auto& e : fs::directory_iterator(dir_ / "out")) {
      cases.push_back(nlohmann::json::parse(r3::test::read_file_bytes(e.path())));
    }
    fs::remove_all(dir_ / "out");
    return cases;
  }

  const r3::test::ScratchDir scratch_{"r3fuzz-seed-sglang"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(SeedSglang, DefaultsToTheSglangProfileAndReplaysClean) {
  const r3::test::BinaryRun r = seed({});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "r3fuzz seed: wrote 6 case(s) into " + (dir_ / "out").string() + " (0 duplicate(s) skipped)\n");
  const r3::test::BinaryRun replay =
      r3::test::run_binary(R3FUZZ_BINARY, {"replay", "--impl", "sglang-fixed", (dir_ / "out").string()}, dir_);
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  int prefill_graphs = 0;
  for (const nlohmann::json& c : written()) {
    EXPECT_EQ(c["engine"], "sglang");
    EXPECT_EQ(c["profile"], "sglang");
    EXPECT_EQ(c["note"], "a small SGLang DP-attention deployment");
    if (c["cuda_graph"].contains("prefill")) ++prefill_graphs;
  }
  EXPECT_EQ(prefill_graphs, 6);  // upstream captures BCG under DP attention (PR #31682)
}

TEST_F(SeedSglang, MilesProfileDropsThePrefillGraphUnderDpAttention) {
  const r3::test::BinaryRun r = seed({"--profile", "sglang-miles"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The extend cases after a decode replay now differ only in last_decode_bucket: still distinct.
  for (const nlohmann::json& c : written()) {
    EXPECT_EQ(c["profile"], "sglang-miles");
    EXPECT_FALSE(c["cuda_graph"].contains("prefill")) << c.dump();
  }
}

TEST_F(SeedSglang, RefusesMetadataLogsAndVllmProfiles) {
  const r3::test::BinaryRun log = seed({"--log", (dir_ / "steps.jsonl").string()});
  EXPECT_NE(log.exit_code, 0);
  EXPECT_NE(log.err.find("--log: metadata logs are vLLM's (num_tokens_across_dp, local_sizes); an SGLang deployment "
                         "seeds from its traffic only"),
            std::string::npos)
      << log.err;
  const r3::test::BinaryRun vllm = seed({"--profile", "vllm"});
  EXPECT_NE(vllm.exit_code, 0);
  EXPECT_NE(vllm.err.find("is an sglang step, and profile vllm is vllm's"), std::string::npos) << vllm.err;
}

}  // namespace
