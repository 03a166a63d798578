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
    EXPECT_EQ(f["replay"], "r3fuzz replay " + file);
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
  EXPECT_NE(r.out.find("replay: r3fuzz replay " + out_dir()), std::string::npos) << r.out;
}

}  // namespace
