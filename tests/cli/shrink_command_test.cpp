// End-to-end tests of `r3fuzz shrink` and of `r3fuzz run`'s shrinking: the real binary, its
// exit codes, output and files. R3FUZZ_BINARY names the binary under test.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Ran = r3::test::BinaryRun;
using r3::test::read_file_bytes;

class ShrinkCommand : public ::testing::Test {
 protected:
  // Runs the binary with `args` (already shell-safe: paths under dir_ and plain words).
  Ran run(const std::string& args) { return r3::test::run_binary_command_line(R3FUZZ_BINARY, args, dir_); }

  fs::path write(const std::string& name, const std::string& text) { return scratch_.write(name, text); }

  const r3::test::ScratchDir scratch_{"r3fuzz-shrink-e2e"};
  const fs::path dir_ = scratch_.path();
};

// DP32/TP8 with thousands of tokens per rank, gathered with SP: vllm-pre-50874 rejects it.
std::string production_case_json() {
  nlohmann::json tokens = nlohmann::json::array();
  for (int d = 0; d < 32; ++d) tokens.push_back(1000 + 217 * d);
  nlohmann::json c = {{"format", "r3fuzz-case/1"},
                      {"topology", {{"dp", 32}, {"tp", 8}, {"ep", true}, {"sp", true}}},
                      {"model", {{"layers", 48}, {"top_k", 8}, {"experts", 256}}},
                      {"max_num_tokens", 8192},
                      {"tokens", tokens},
                      {"padding", "none"},
                      {"path", "gathered"},
                      {"layer", 31}};
  return c.dump();
}

TEST_F(ShrinkCommand, ShrinksAFailingCaseAndWritesCaseEntryAndTest) {
  const fs::path input = write("big.json", production_case_json());
  const Ran r = run("shrink " + input.string() + " --impl vllm-pre-50874 --out " + (dir_ / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  to:   dp 2 tp 2 ep sp, M 1, tokens [1, 0], L 1 K 1 E 1, padding none, path gathered, layer 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("TEST(Regression, VllmPre50874_SpuriousReject_Gathered_Error) {"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("shrink: dp: dp 32 -> 16;"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("shrink: stopped at fixpoint after"), std::string::npos) << r.err;

  const auto minimal = nlohmann::json::parse(read_file_bytes(dir_ / "out" / "big.min.json"));
  EXPECT_EQ(minimal["tokens"], nlohmann::json::array({1, 0}));
  EXPECT_FALSE(minimal.contains("expect"));
  const auto entry = nlohmann::json::parse(read_file_bytes(dir_ / "out" / "vllm-pre-50874-spurious_reject-gathered-error.json"));
  EXPECT_EQ(entry["expect"], (nlohmann::json{{"impl", "vllm-pre-50874"}, {"verdict", "spurious_reject"},
                                             {"severity", "failure"}}));
  EXPECT_EQ(read_file_bytes(dir_ / "out" / "big.min_test.cpp"), r.out.substr(r.out.find("// Regression:")));

  // The regression entry replays as its "expect" says.
  const Ran replay = run("replay " + (dir_ / "out" / "vllm-pre-50874-spurious_reject-gathered-error.json").string());
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
}

TEST_F(ShrinkCommand, ShrinkingTheResultAgainChangesNothing) {
  const fs::path input = write("big.json", production_case_json());
  ASSERT_EQ(run("shrink " + input.string() + " --impl vllm-pre-50874").exit_code, 0);
  const std::string once = read_file_bytes(dir_ / "big.min.json");
  const Ran again = run("shrink " + (dir_ / "big.min.json").string() + " --impl vllm-pre-50874");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto strip_note = [](std::string text) {
    auto j = nlohmann::json::parse(text);
    j.erase("note");
    return j;
  };
  EXPECT_EQ(strip_note(read_file_bytes(dir_ / "big.min.min.json")), strip_note(once));
  EXPECT_NE(again.err.find(" 0 reductions"), std::string::npos) << again.err;
}

TEST_F(ShrinkCommand, TheImplementationComesFromExpectWhenNotGiven) {
  const fs::path input = write("entry.json", R"({"format": "r3fuzz-case/1",
    "topology": {"dp": 4, "tp": 2, "ep": true, "sp": true}, "model": {"layers": 2, "top_k": 1, "experts": 4},
    "max_num_tokens": 16, "tokens": [5, 5, 16, 0], "padding": "none", "path": "gathered", "layer": 1,
    "expect": {"impl": "r3-fixed+tp-major-order", "verdict": "wrong_rows", "severity": "failure"}})");
  const Ran r = run("shrink " + input.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("shrunk " + input.string() + " (r3-fixed+tp-major-order/wrong_rows/gathered/gathered_shards"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("r3::make_implementation(\"r3-fixed+tp-major-order\", options)"),
            std::string::npos)
      << r.out;
}

TEST_F(ShrinkCommand, APassingCaseHasNothingToShrink) {
  const fs::path input = write("big.json", production_case_json());
  const Ran r = run("shrink " + input.string() + " --impl r3-fixed");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, input.string() + " passes on r3-fixed (judged symbolic): nothing to shrink\n");
  EXPECT_FALSE(fs::exists(dir_ / "big.min.json"));
}

TEST_F(ShrinkCommand, BadInputIsAUsageError) {
  const fs::path input = write("bad.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 0}})");
  Ran r = run("shrink " + input.string() + " --impl r3-fixed");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("r3fuzz shrink: " + input.string() + ": ", 0), 0u) << r.err;

  r = run("shrink " + write("ok.json", production_case_json()).string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "r3fuzz shrink: --impl: not given, and the case has no \"expect\" naming an implementation to take "
                   "it from\n");

  r = run("shrink --impl r3-fixed");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "r3fuzz shrink: give exactly one of CASE.json and --from-bytes FILE\n");

  r = run("shrink " + (dir_ / "ok.json").string() + " --impl nosuch");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--impl nosuch: unknown implementation"), std::string::npos) << r.err;
}

// libFuzzer crash artifacts: the binary case format, decoded, shrunk, written as JSON.
TEST_F(ShrinkCommand, CrashBytesAreDecodedShrunkAndWrittenAsJson) {
  const fs::path json = write("big.json", R"({"format": "r3fuzz-case/1",
    "topology": {"dp": 8, "tp": 4, "ep": true, "sp": true}, "model": {"layers": 4, "top_k": 2, "experts": 64},
    "max_num_tokens": 64, "tokens": [63, 1, 17, 0, 64, 5, 9, 33], "padding": "none", "path": "gathered",
    "layer": 3})");
  const Ran seeded = run("seed --to-binary --out " + (dir_ / "bytes").string() + " " + json.string());
  ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
  fs::copy_file(dir_ / "bytes" / "big.bin", dir_ / "crash-1234");
  const Ran r = run("shrink --from-bytes " + (dir_ / "crash-1234").string() + " --impl vllm-pre-50874");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto minimal = nlohmann::json::parse(read_file_bytes(dir_ / "crash-1234.min.json"));
  EXPECT_EQ(minimal["tokens"], nlohmann::json::array({1, 0}));
  EXPECT_EQ(minimal["topology"]["dp"], 2);

  const Ran bad = run("shrink --from-bytes " + write("crash-bad", std::string("\x07\x00", 2)).string() +
                      " --impl vllm-pre-50874");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("r3fuzz shrink: " + (dir_ / "crash-bad").string() + ": ", 0), 0u) << bad.err;
}

// `r3fuzz run` writes each unique failure shrunk; --no-shrink writes it as found.
TEST_F(ShrinkCommand, RunShrinksUniqueFailuresUnlessTold) {
  ASSERT_EQ(run("run --impl vllm-pre-50874 --cases 300 --size production --out " + (dir_ / "shrunk").string()).exit_code,
            1);
  ASSERT_EQ(run("run --impl vllm-pre-50874 --cases 300 --size production --no-shrink --out " +
                (dir_ / "raw").string())
                .exit_code,
            1);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "shrunk")) {
    ++files;
    const auto shrunk = nlohmann::json::parse(read_file_bytes(e.path()));
    const auto raw = nlohmann::json::parse(read_file_bytes(dir_ / "raw" / e.path().filename()));
    EXPECT_LE(shrunk["topology"]["dp"], raw["topology"]["dp"]) << e.path();
    EXPECT_LE(shrunk["max_num_tokens"], raw["max_num_tokens"]) << e.path();
    EXPECT_LE(shrunk["topology"]["dp"], 2) << e.path();
    EXPECT_EQ(shrunk["expect"], raw["expect"]) << e.path();
  }
  EXPECT_GT(files, 0);
}

}  // namespace
