// End-to-end tests of issue 15 ("Hostile and bad input"), the crash and the security items: the
// real binary on the exact inputs of the issue, its exit code and its exact words. Files are
// data, never commands, and output goes only under the folder the user named (docs/SECURITY.md).
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Output = r3::test::BinaryRun;

class HostileInput : public r3::test::WorkDirFixture {
 protected:
  HostileInput() : WorkDirFixture("r3fuzz-hostile") {}
};

// Issue 15 item 0: the all-idle DP-chunked step (no capture call at all).
std::string idle_chunked_case(int tp) {
  return R"({"format": "r3fuzz-case/1", "topology": {"dp": 2, "tp": )" + std::to_string(tp) +
         R"(, "ep": true, "sp": false},
 "model": {"layers": 2, "top_k": 1, "experts": 256}, "max_num_tokens": 2, "tokens": [0, 0],
 "padding": "none", "path": "local", "layer": 0, "dp_chunk": 100})";
}

TEST_F(HostileInput, Item0ExplainJsonOnAnAllIdleChunkedStep) {
  for (int tp : {2, 1}) {
    write("idle.json", idle_chunked_case(tp));
    const Output o = run("explain idle.json --json");
    ASSERT_EQ(o.exit_code, 0) << "tp " << tp << ": " << o.err;  // was 139: a segmentation fault
    EXPECT_EQ(o.err, "");
    const json doc = json::parse(o.out);
    EXPECT_EQ(doc["calls"], json::array());
    ASSERT_EQ(doc["ranks"].size(), static_cast<size_t>(2 * tp));
    EXPECT_EQ(doc["ranks"].back(), (json{{"dp", 1}, {"tp", tp - 1}, {"n", nullptr}, {"expected", nullptr}}));
    const Output text = run("explain idle.json");
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("no capture call: every rank is idle (DP chunking issues no chunk)"), std::string::npos)
        << text.out;
  }
}

const std::string kPwned = R"({"format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false},
 "model": {"layers": 2, "top_k": 1, "experts": 8}, "max_num_tokens": 4, "tokens": [1], "padding": "none",
 "path": "single", "layer": 0, "expect": {"impl": "IMPL", "verdict": "pass", "severity": ""}})";

std::string case_expecting(const std::string& impl) {
  std::string text = kPwned;
  return text.replace(text.find("IMPL"), 4, impl);
}

const std::string kRefusal =
    R"(expect.impl "external:touch PWNED; echo hi" names an external command; r3fuzz runs commands only from its )"
    "command line: pass --impl with that name, or --allow-external-from-files, to run it";
const std::string kReplayRefusal =
    "their expect.impl names an external command; r3fuzz runs commands only from its command line: pass --impl "
    "with that name, or --allow-external-from-files, to run it";

TEST_F(HostileInput, Item1ReplayNeverRunsACommandNamedInAFile) {
  write("cases/a-pwn.json", case_expecting("external:touch PWNED; echo hi"));
  write("cases/b-good.json", case_expecting("vllm-50874"));
  const Output o = run("replay cases");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_FALSE(fs::exists(work_ / "PWNED")) << "the file's command ran";
  // The rule once, then each file with the name it gave (tests/cli/one_cause_told_once_test.cpp).
  EXPECT_EQ(o.err, "r3fuzz replay: 1 case file(s) not run: " + kReplayRefusal +
                       ":\n  cases/a-pwn.json: expect.impl \"external:touch PWNED; echo hi\"\n");
  // The other file still ran.
  EXPECT_NE(o.out.find("cases/b-good.json: vllm-50874: pass (concrete): as expected"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cases/a-pwn.json: not run: needs --allow-external-from-files"), std::string::npos) << o.out;
}

TEST_F(HostileInput, Item1EveryPrefixThatReachesAnExternalCommandIsRefused) {
  for (const std::string impl : {"gpu:external:touch PWNED", "external:touch PWNED+no-trim"}) {
    write("p.json", case_expecting(impl));
    const Output o = run("replay p.json");
    EXPECT_EQ(o.exit_code, 2) << impl << o.out << o.err;
    EXPECT_NE(o.err.find(kReplayRefusal + ":\n  p.json: expect.impl \"" + impl + "\"\n"), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(work_ / "PWNED")) << impl;
  }
}

TEST_F(HostileInput, Item1TheCommandLineCanStillNameIt) {
  // The refusal is the only thing between the file and the shell: with the flag, the command runs
  // (and fails the adapter hello, which is not the point here).
  write("pwn.json", case_expecting("external:touch PWNED; echo hi"));
  run("replay pwn.json --allow-external-from-files");
  EXPECT_TRUE(fs::exists(work_ / "PWNED"));
  fs::remove(work_ / "PWNED");
  run("replay pwn.json --impl 'external:touch PWNED; echo hi'");
  EXPECT_TRUE(fs::exists(work_ / "PWNED"));
}

TEST_F(HostileInput, Item1ShrinkNeverRunsACommandNamedInAFile) {
  write("pwn.json", case_expecting("external:touch PWNED; echo hi"));
  const Output o = run("shrink pwn.json");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz shrink: " + kRefusal + "\n");
  EXPECT_FALSE(fs::exists(work_ / "PWNED"));
}

TEST_F(HostileInput, Item1NoRegressionEntryNamesAnExternalCommand) {
  // ctest replays corpus/regression without --allow-external-from-files: an entry naming a
  // command would fail it (exit 2) rather than run. This keeps the corpus itself clean.
  for (const auto& entry : fs::directory_iterator(fs::path(R3FUZZ_SOURCE_DIR) / "corpus" / "regression")) {
    const std::string text = r3::test::read_file_bytes(entry.path());
    EXPECT_EQ(text.find("external:"), std::string::npos) << entry.path();
  }
}

std::string deployment_named(const std::string& name) {
  return R"({"format": "r3fuzz-deployment/1", "name": ")" + name +
         R"(", "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false},
 "model": {"layers": 4, "top_k": 2, "experts": 64}, "max_num_tokens": 16, "path": "gathered",
 "traffic": {"prefill_lengths": [4]}})";
}

TEST_F(HostileInput, Item2SeedNeverWritesOutsideOut) {
  write("up.json", deployment_named("../escaped"));
  const Output up = run("seed --deployment up.json --out out");
  EXPECT_EQ(up.exit_code, 2) << up.out;
  EXPECT_EQ(up.err,
            "r3fuzz seed: --deployment up.json: name: character 3 is not allowed (use letters, digits, '-', '_' and "
            "'.': it names the files r3fuzz writes)\n");
  const fs::path abs = dir_ / "abs";
  write("abs.json", deployment_named(abs.string()));
  const Output a = run("seed --deployment abs.json --out out");
  EXPECT_EQ(a.exit_code, 2) << a.out;
  EXPECT_EQ(a.err,
            "r3fuzz seed: --deployment abs.json: name: character 1 is not allowed (use letters, digits, '-', '_' and "
            "'.': it names the files r3fuzz writes)\n");
  write("dots.json", deployment_named("a..b"));
  const Output dots = run("seed --deployment dots.json --out out");
  EXPECT_EQ(dots.exit_code, 2);
  EXPECT_EQ(dots.err, "r3fuzz seed: --deployment dots.json: name: \"..\" is not allowed (it names the files r3fuzz writes)\n");
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find("escaped"), std::string::npos) << entry.path();
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find("abs-"), std::string::npos) << entry.path();
  // A safe name still seeds, inside --out.
  write("ok.json", deployment_named("ok.v1"));
  const Output ok = run("seed --deployment ok.json --out out");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "r3fuzz seed: wrote 2 case(s) into out (0 duplicate(s) skipped)\n");
}

TEST_F(HostileInput, Item16AFindingNamedAfterALongAdapterCommandIsWritten) {
  // The shell ignores the comment; the signature, and so the finding's file name, carries it.
  const std::string adapter = "python3 " + std::string(R3FUZZ_SOURCE_DIR) + "/examples/python/vllm_50874_adapter.py #" +
                              std::string(300, 'x');
  const Output o = run("run --impl 'external:" + adapter + "' --cases 300 --mode concrete --no-shrink --out out");
  ASSERT_EQ(o.exit_code, 1) << o.out << o.err;  // vllm-50874's known findings, each written
  EXPECT_EQ((o.out + o.err).find("cannot open for writing"), std::string::npos) << o.out << o.err;
  EXPECT_NE(o.out.find("result: "), std::string::npos) << o.out;
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(work_ / "out")) {
    ++files;
    EXPECT_LE(entry.path().filename().string().size(), 110u) << entry.path();
  }
  EXPECT_GT(files, 0u);
}

}  // namespace
