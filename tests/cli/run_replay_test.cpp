// End-to-end tests of `r3fuzz run` and `r3fuzz replay`: the real binary, its exit codes
// and output. R3FUZZ_BINARY names the binary under test.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fuzz/campaign/shell_quote.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Ran = r3::test::BinaryRun;
using r3::test::read_file_bytes;

class RunReplay : public ::testing::Test {
 protected:
  pid_t spawn(const std::vector<std::string>& args) { return r3::test::start_binary(R3FUZZ_BINARY, args, dir_); }
  Ran finish(pid_t pid) { return r3::test::wait_for_binary(pid, dir_); }
  Ran run(const std::vector<std::string>& args) { return finish(spawn(args)); }

  std::string out_dir() const { return (dir_ / "out").string(); }

  const r3::test::ScratchDir scratch_{"r3fuzz-e2e"};
  const fs::path dir_ = scratch_.path();
};

// One grammar names every faulted implementation, and --fault means the same: run takes both.
TEST_F(RunReplay, FaultedImplementationsByNameOrByFlag) {
  const Ran named = run({"run", "--impl", "r3-fixed+no-trim", "--cases", "300", "--no-shrink", "--out", out_dir()});
  EXPECT_EQ(named.exit_code, 1) << named.err;
  EXPECT_NE(named.out.find("r3-fixed+no-trim/"), std::string::npos) << named.out;
  const Ran flagged = run({"run", "--impl", "r3-fixed", "--fault", "no-trim", "--cases", "300", "--no-shrink", "--out",
                           out_dir() + "2"});
  EXPECT_EQ(flagged.exit_code, 1) << flagged.err;
  // The same campaign: the same summary line (only the --out paths differ elsewhere).
  auto result_line = [](const std::string& out) {
    const size_t at = out.find("result: ");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_FALSE(result_line(named.out).empty()) << named.out;
  EXPECT_EQ(result_line(flagged.out), result_line(named.out));
  EXPECT_NE(flagged.out.find("r3-fixed+no-trim/"), std::string::npos) << flagged.out;
  const Ran retired = run({"run", "--impl", "gpu+fault:no-trim", "--cases", "1"});
  EXPECT_EQ(retired.exit_code, 2);
  EXPECT_NE(retired.err.find("--impl gpu+fault:no-trim: \"+fault:NAME\" is no longer accepted; write gpu+no-trim"),
            std::string::npos)
      << retired.err;
  const Ran twice = run({"run", "--impl", "r3-fixed+no-trim", "--fault", "floor-sp", "--cases", "1"});
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("--impl r3-fixed+no-trim: names a fault already, and --fault gives floor-sp"),
            std::string::npos)
      << twice.err;
}

TEST_F(RunReplay, ExitCodes) {
  Ran clean = run({"run", "--impl", "r3-fixed", "--cases", "300", "--out", out_dir()});
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_NE(clean.out.find("result: 0 failing and 0 latent findings (0 failing and 0 latent signatures) in 300 "
                           "cases (seed 1, profile vllm): exit 0"),
            std::string::npos)
      << clean.out;
  EXPECT_FALSE(fs::exists(out_dir())) << "nothing to write, no directory";

  Ran found = run({"run", "--cases", "300", "--out", out_dir()});
  EXPECT_EQ(found.exit_code, 1) << found.err;
  EXPECT_NE(found.out.find("vllm-pre-50874/capacity/gathered/"), std::string::npos) << found.out;

  Ran unknown = run({"run", "--impl", "vllm-1"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--impl vllm-1: unknown implementation; known: vllm-50874, vllm-pre-50874, r3-fixed"),
            std::string::npos)
      << unknown.err;
  EXPECT_EQ(run({"run", "--mode", "fast"}).exit_code, 2);
  EXPECT_EQ(run({"run", "--time", "1", "--cases", "5"}).exit_code, 2);
  EXPECT_EQ(run({"run", "--cases", "-3"}).exit_code, 2);
  Ran missing = run({"replay", (dir_ / "nothing.json").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nothing.json: no such file or directory"), std::string::npos) << missing.err;
}

TEST_F(RunReplay, SameSeedGivesByteIdenticalJson) {
  const std::vector<std::string> args = {"run", "--cases", "2000", "--seed", "7", "--json", "--out", out_dir()};
  const Ran a = run(args);
  const Ran b = run(args);
  EXPECT_EQ(a.exit_code, 1);
  EXPECT_EQ(a.out, b.out);
  const nlohmann::json doc = nlohmann::json::parse(a.out);
  EXPECT_EQ(doc["seed"], 7);
  EXPECT_EQ(doc["cases"], 2000);
  EXPECT_FALSE(doc.contains("timing"));
  EXPECT_TRUE(nlohmann::json::parse(run({"run", "--cases", "50", "--json", "--timing", "--out", out_dir()}).out)
                  .contains("timing"));
}

TEST_F(RunReplay, WrittenFailuresReplayToTheirSignature) {
  const Ran found = run({"run", "--cases", "400", "--json", "--out", out_dir()});
  ASSERT_EQ(found.exit_code, 1) << found.err;
  const nlohmann::json doc = nlohmann::json::parse(found.out);
  ASSERT_FALSE(doc["failures"].empty());
  for (const auto& f : doc["failures"]) {
    const std::string file = f["file"];
    EXPECT_EQ(f["replay"], r3::program_word(R3FUZZ_BINARY) + " replay " + file);
    const Ran again = run({"replay", file});
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("[" + f["signature"].get<std::string>() + "]"), std::string::npos) << again.out;
    EXPECT_NE(again.out.find(": as expected"), std::string::npos) << again.out;
  }
  // The whole directory replays too; a file whose expectation no longer holds fails it.
  EXPECT_EQ(run({"replay", out_dir()}).exit_code, 0);
  const std::string first = doc["failures"][0]["file"];
  nlohmann::json edited = nlohmann::json::parse(read_file_bytes(first));
  edited["expect"]["verdict"] = "pass";
  edited["expect"]["severity"] = nullptr;
  std::ofstream(first) << edited.dump(2);
  const Ran differs = run({"replay", out_dir()});
  EXPECT_EQ(differs.exit_code, 1) << differs.out << differs.err;
  EXPECT_NE(differs.out.find("UNEXPECTED, the file expects pass"), std::string::npos) << differs.out;
}

TEST_F(RunReplay, CtrlCStopsAfterTheCurrentCaseAndStillReports) {
  const pid_t pid = spawn({"run", "--time", "120", "--out", out_dir()});
  // Wait until the campaign is running (it writes its first failure within a few cases).
  for (int i = 0; i < 2000 && !(fs::exists(out_dir()) && !fs::is_empty(out_dir())); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(fs::exists(out_dir()) && !fs::is_empty(out_dir())) << "no failure written";
  kill(pid, SIGINT);
  const Ran r = finish(pid);
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the usual code: failures were found
  EXPECT_NE(r.out.find("(interrupted)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay: " + r3::program_word(R3FUZZ_BINARY) + " replay " + out_dir()), std::string::npos)
      << r.out;
}

// --jobs N: case i still comes from (seed, i) and results merge in case order, so the report of
// --cases K is byte for byte the same for every worker count.
TEST_F(RunReplay, JobsGiveByteIdenticalReportsForAFixedCaseCount) {
  std::vector<std::string> reports;
  for (const char* jobs : {"1", "2", "3"}) {
    Ran r = run({"run", "--cases", "3000", "--jobs", jobs, "--impl", "vllm-50874", "--impl", "vllm-pre-50874",
                 "--impl", "gpu", "--out", out_dir(), "--json"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    reports.push_back(r.out);
  }
  EXPECT_EQ(reports[1], reports[0]);
  EXPECT_EQ(reports[2], reports[0]);
  EXPECT_EQ(nlohmann::json::parse(reports[0])["cases"], 3000);
  EXPECT_EQ(run({"run", "--jobs", "0"}).exit_code, 2);
}

// Ctrl-C stops every worker, and the summary still covers the cases merged before it.
TEST_F(RunReplay, CtrlCStopsEveryWorkerAndStillReports) {
  const pid_t pid = spawn({"run", "--time", "120", "--jobs", "2", "--out", out_dir()});
  for (int i = 0; i < 2000 && !(fs::exists(out_dir()) && !fs::is_empty(out_dir())); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(fs::exists(out_dir()) && !fs::is_empty(out_dir())) << "no failure written";
  const auto sent = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  const Ran r = finish(pid);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count(), 5.0);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("(interrupted)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" (one per bug) under profile vllm:"), std::string::npos) << r.out;
}

// The main job's report (issue: reports users can trust): under the default profile the four
// built-in implementations show four bugs, each once, with every implementation it affects.
TEST_F(RunReplay, FindingsAreOnePerBugWithEveryImplementationTheyAffect) {
  Ran r = run({"run", "--cases", "5000", "--impl", "vllm-50874", "--impl", "vllm-pre-50874", "--impl", "r3-fixed",
               "--impl", "gpu", "--out", out_dir(), "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["profile"], "vllm");
  std::vector<std::string> summary;
  for (const nlohmann::json& f : doc["findings"]) {
    std::string impls;
    for (const auto& i : f["implementations"]) impls += (impls.empty() ? "" : "+") + i.get<std::string>();
    summary.push_back(f["severity"].get<std::string>() + " " + f["verdict"].get<std::string>() + " " + impls);
    // Every key the issue names, and a reproducer that replays to the finding's verdict.
    for (const char* key : {"severity", "verdict", "implementations", "signatures", "occurrences", "file"})
      EXPECT_TRUE(f.contains(key)) << key;
    EXPECT_GE(f["occurrences"].get<int64_t>(), static_cast<int64_t>(f["signatures"].size()));
    const std::string file = f["file"];
    Ran again = run({"replay", file});
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(again.out.find(": as expected"), std::string::npos) << again.out;
    EXPECT_NE(read_file_bytes(file).find("\"profile\": \"vllm\""), std::string::npos) << file;
  }
  EXPECT_EQ(summary, (std::vector<std::string>{"failure spurious_reject vllm-pre-50874", "failure capacity vllm-pre-50874",
                                               "latent wrong_rows vllm-50874+gpu",
                                               "failure wrong_rows vllm-50874+gpu"}));
  // The micro-batch overwrite: one finding on both paths vLLM micro-batches on.
  std::vector<std::string> overwrite = doc["findings"][3]["signatures"];
  EXPECT_EQ(overwrite, (std::vector<std::string>{"vllm-50874/wrong_rows/local/local", "gpu/wrong_rows/local/local",
                                                 "vllm-50874/wrong_rows/sp_shard/sp_allgather",
                                                 "gpu/wrong_rows/sp_shard/sp_allgather"}));
  // Every failure signature names its finding; the failures stay as they were.
  for (const nlohmann::json& f : doc["failures"]) {
    EXPECT_NE(f["impl"], "r3-fixed");
    EXPECT_GE(f["finding"].get<int>(), 1);
    EXPECT_LE(f["finding"].get<size_t>(), doc["findings"].size());
  }
  // The text report starts with the table.
  Ran text = run({"run", "--cases", "5000", "--impl", "vllm-50874", "--impl", "gpu", "--out", out_dir()});
  EXPECT_EQ(text.out.rfind("2 findings (one per bug) under profile vllm:\n"
                           "  #  severity  verdict     implementations  cases  reproducer\n",
                           0),
            0u)
      << text.out;
}

// Under profile any, today's any-only findings are still found: a CUDA-graph size above M.
TEST_F(RunReplay, ProfileAnyStillFindsCudagraphSizesAboveM) {
  Ran r = run({"run", "--cases", "5000", "--profile", "any", "--impl", "vllm-50874", "--out", out_dir(), "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  bool capacity = false;
  for (const nlohmann::json& f : doc["findings"]) {
    if (f["verdict"] != "capacity") continue;
    capacity = true;
    const std::string text = read_file_bytes(f["file"].get<std::string>());
    EXPECT_NE(text.find("\"profile\": \"any\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"cudagraph\""), std::string::npos) << text;
  }
  EXPECT_TRUE(capacity) << r.out;
  Ran vllm = run({"run", "--cases", "5000", "--impl", "vllm-50874", "--out", out_dir(), "--json"});
  const nlohmann::json vllm_doc = nlohmann::json::parse(vllm.out);
  for (const nlohmann::json& f : vllm_doc["findings"]) EXPECT_NE(f["verdict"], "capacity");
}

}  // namespace
