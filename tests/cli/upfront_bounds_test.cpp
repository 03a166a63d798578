// End-to-end: every number a deployment holds and every space exhaust is asked for is bounded,
// and each bound is refused upfront, before anything it sizes is allocated or enumerated
// (docs/SECURITY.md, "Memory budgets"). Each command runs under `ulimit -v 4000000` (a 4 GB cap)
// and a `timeout`, so a regression fails (exit 3, or 124) rather than exhausting the machine.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/memory_cap.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using Output = r3::test::BinaryRun;

using r3::test::kAddressSanitizer;

class UpfrontBounds : public r3::test::WorkDirFixture {
 protected:
  UpfrontBounds() : WorkDirFixture("r3fuzz-upfront-bounds") {}

  // r3fuzz `args` under the 4 GB cap (AddressSanitizer reserves terabytes of address space for
  // its shadow, so the sanitized build runs without it) and `seconds` of wall time (exit 124).
  Output run_capped(const std::string& args, int seconds) {
    const std::string cap = r3::test::memory_cap_prefix();
    const std::string cmd = "cd '" + work_.string() + "' && " + cap + "timeout " + std::to_string(seconds) + " '" +
                            R3FUZZ_BINARY + "' " + args + " >'" + (dir_ / "stdout").string() + "' 2>'" +
                            (dir_ / "stderr").string() + "'";
    return r3::test::captured_run(r3::test::exit_code_of_wait_status(std::system(cmd.c_str())), dir_);
  }

  size_t files_in(const std::string& folder) const {
    size_t n = 0;
    if (fs::exists(work_ / folder))
      for ([[maybe_unused]] const auto& e : fs::directory_iterator(work_ / folder)) ++n;
    return n;
  }
};

// An SGLang deployment of `dp` attention-DP ranks; `extra` adds keys (leading comma included).
std::string sglang_deployment(int dp, const std::string& traffic, const std::string& extra = "") {
  return R"({"format": "r3fuzz-deployment/1", "engine": "sglang", "name": "big",
  "topology": {"dp": )" + std::to_string(dp) + R"(, "tp": 1, "dp_attention": true, "a2a": "none"},
  "model": {"layers": 2, "top_k": 2, "experts": 16},
  "chunked_prefill_size": 8192, "max_running_requests": 64,
  "traffic": )" + traffic + extra + "}";
}

// `n` prefill lengths cycling through `from`..`from` + `distinct` - 1, as a JSON list.
std::string lengths(int n, int distinct, int from = 1) {
  std::string text = "[";
  for (int i = 0; i < n; ++i) text += (i ? ", " : "") + std::to_string(from + i % distinct);
  return text + "]";
}

TEST_F(UpfrontBounds, SeedRefusesADecodeMaxBsBeyondABatchSizesBound) {
  // 10^12 made SGLang's default bucket list in full: std::bad_alloc, exit 3.
  write("d.json", sglang_deployment(2, R"({"decode_requests": [1, 4]})",
                                    R"(, "cuda_graph": {"decode": "sglang-default", "decode_max_bs": 1000000000000})"));
  const Output o = run_capped("seed --deployment d.json --out s", 60);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("d.json: cuda_graph.decode_max_bs: 1000000000000 is out of range [1, 16777216] (a decode "
                       "batch size, bounded as a bucket is)"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(files_in("s"), 0u);
}

TEST_F(UpfrontBounds, SeedRefusesPrefillLengthsBeyondWhatADeploymentSeeds) {
  // 1.5 MB: 1024 ranks and 307,500 prefill lengths made 1.2 million cases of 1024 tokens, held
  // whole before deduplication (exit 3 under the cap).
  write("d.json", sglang_deployment(1024, R"({"prefill_lengths": )" + lengths(307500, 1000, 1000) + "}",
                                    R"(, "cuda_graph": {"decode": [1, 2, 4]})"));
  ASSERT_GT(fs::file_size(work_ / "d.json"), 1500000u);
  const Output o = run_capped("seed --deployment d.json --out s", 60);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("d.json: traffic.prefill_lengths: 307500 entries, at most 8192 (each seeds two cases or more; "
                       "a deployment seeds at most 16384)"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(files_in("s"), 0u);
}

TEST_F(UpfrontBounds, SeedRefusesTrafficOfMoreCasesThanItsBoundBeforeMakingAny) {
  // 8192 lengths within the list's bound, but four cases each with decode graphs: 32,768.
  write("d.json", sglang_deployment(1024, R"({"prefill_lengths": )" + lengths(8192, 8) + "}",
                                    R"(, "cuda_graph": {"decode": [1, 2, 4]})"));
  const Output o = run_capped("seed --deployment d.json --out s", 60);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("d.json: traffic: seeds 32768 cases (0 decode and 32768 prefill steps), at most 16384 (fewer "
                       "prefill_lengths, or a narrower decode range)"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(files_in("s"), 0u);
}

TEST_F(UpfrontBounds, SeedHoldsOnlyTheUniqueCasesOfItsTraffic) {
  // 16,384 cases of 1024 ranks, 32 of them unique: held whole before deduplication they took
  // 210 MB; made one at a time and deduplicated as they are made, a few MB.
  write("d.json", sglang_deployment(1024, R"({"prefill_lengths": )" + lengths(4096, 8) + "}",
                                    R"(, "cuda_graph": {"decode": [1, 2, 4]})"));
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open((dir_ / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open((dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || chdir(work_.c_str()) != 0) _exit(126);
    execl(R3FUZZ_BINARY, R3FUZZ_BINARY, "seed", "--deployment", "d.json", "--out", "s", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  rusage usage{};
  ASSERT_EQ(wait4(pid, &status, 0, &usage), pid);
  const Output o = r3::test::captured_run(r3::test::exit_code_of_wait_status(status), dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "r3fuzz seed: wrote 32 case(s) into s (16352 duplicate(s) skipped)\n");
  EXPECT_EQ(files_in("s"), 32u);
  // AddressSanitizer's quarantine keeps freed memory resident: the bound is the default build's.
  if (!kAddressSanitizer) {
    EXPECT_LT(usage.ru_maxrss, 64 * 1024) << "peak resident KiB";
  }
}

// The issue's command, every flag inside its range: it reached 24 GB listing SGLang's 9.2 billion
// units to count them before its refusal. Now they are counted without listing, and refused at once.
TEST_F(UpfrontBounds, ExhaustRefusesSglangsLargestBoundsBeforeEnumerating) {
  const auto start = std::chrono::steady_clock::now();
  const Output o = run_capped("exhaust --profile sglang --max-dp 8 --max-tp 8 --max-tokens 32 --max-m 32", 60);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("the bounds D<=8 T<=8 sum(tokens)<=32 M<=32 L=2 K=1 E=4, profile sglang enumerate up to "),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find(" cases in 9,172,631,424 token layouts; at most 1,000,000,000 cases in 5,000,000 layouts: "
                       "lower --max-dp, --max-tp, --max-tokens or --max-m"),
            std::string::npos)
      << o.err;
  EXPECT_LT(seconds, 30);
}

// vLLM's space at every flag's largest value (issue 15's fix): still refused at once.
TEST_F(UpfrontBounds, ExhaustRefusesVllmsLargestBoundsBeforeEnumerating) {
  for (const std::string profile : {"vllm", "any"}) {
    const Output o = run_capped("exhaust --profile " + profile + " --max-dp 8 --max-tp 8 --max-tokens 32 --max-m 32 "
                                "--layers 64 --top-k 64 --experts 1048576",
                                60);
    EXPECT_EQ(o.exit_code, 2) << profile << ": " << o.err;
    EXPECT_NE(o.err.find("at most 1,000,000,000 cases in 5,000,000 layouts"), std::string::npos) << o.err;
  }
}

// --jobs 1024 is in range, but a 4 GB cap holds some 500 thread stacks: creating the rest threw
// with workers running, and std::terminate aborted exhaust (and mutants, which runs its search).
// The started workers now do the work, with the same result, and stderr says so.
TEST_F(UpfrontBounds, ExhaustWithTheMostJobsRunsOnTheThreadsTheSystemStarts) {
  const Output o = run_capped("exhaust --max-dp 2 --max-tp 2 --max-tokens 2 --max-m 2 --jobs 1024", 120);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("no difference within bounds: 1082 cases checked"), std::string::npos) << o.out;
  if (!o.err.empty()) {
    EXPECT_EQ(o.err.rfind("r3fuzz exhaust: --jobs 1024: the system started only ", 0), 0u) << o.err;
    EXPECT_NE(o.err.find(" worker thread(s) ("), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("); they checked the whole space, with the same result\n"), std::string::npos) << o.err;
  }
}

}  // namespace
