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
    if (c["padding"].is_object()) EXPECT_EQ(c["padding"]["cudagraph"].back(), 512);
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
