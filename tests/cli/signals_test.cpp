// End-to-end tests of signals while an adapter is slow (issue 15, items 4 and 5): the adapter
// answers the hello, then sleeps in a child of its shell. SIGINT, SIGTERM and SIGHUP must each
// stop `r3fuzz run` within a second (not after the 20 s adapter timeout), record nothing false
// (no adapter_error for the interruption), print the summary, and leave no adapter process
// behind. Any other command ends on the signal, but kills the adapters first.
#include <signal.h>
#include <sys/types.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Ran = r3::test::BinaryRun;

// The adapter's shell and its sleeping child write their pids to $1.
constexpr const char* kSlowAdapter = R"(echo $$ >> "$1"
read hello
echo '{"type":"hello","protocol":"r3fuzz-adapter/1","name":"slow"}'
sleep 1000 &
echo $! >> "$1"
wait
)";

// True while `pid` is a process that has not ended (a zombie waiting for init has ended).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, name, state;
  if (!(stat >> pid_field >> name >> state)) return false;
  return state != "Z" && state != "X";
}

class Signals : public ::testing::Test {
 protected:
  Signals() { scratch_.write("slow.sh", kSlowAdapter); }

  std::string adapter() const {
    return "external:sh '" + (dir_ / "slow.sh").string() + "' '" + (dir_ / "pids").string() + "'";
  }

  std::vector<pid_t> adapter_pids() const {
    std::ifstream in(dir_ / "pids");
    std::vector<pid_t> pids;
    for (pid_t pid; in >> pid;) pids.push_back(pid);
    return pids;
  }

  // Starts r3fuzz, waits until the adapter sleeps (both pids written), then 2 s more as in
  // the issue, sends `sig` and returns how long r3fuzz took to end after it, and its output.
  std::pair<double, Ran> signal_while_adapter_sleeps(const std::vector<std::string>& args, int sig) {
    const pid_t pid = r3::test::start_binary(R3FUZZ_BINARY, args, dir_);
    for (int i = 0; i < 1000 && adapter_pids().size() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(adapter_pids().size(), 2u) << "the adapter did not start";
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const Clock::time_point sent = Clock::now();
    kill(pid, sig);
    Ran r = r3::test::wait_for_binary(pid, dir_);
    return {std::chrono::duration<double>(Clock::now() - sent).count(), std::move(r)};
  }

  void expect_no_adapter_left() {
    const std::vector<pid_t> pids = adapter_pids();
    ASSERT_EQ(pids.size(), 2u);
    // SIGKILL is delivered at once, but give the kernel a moment to finish the processes.
    for (int i = 0; i < 100 && (alive(pids[0]) || alive(pids[1])); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(alive(pids[0])) << "the adapter's shell outlived r3fuzz";
    EXPECT_FALSE(alive(pids[1])) << "the adapter's child outlived r3fuzz";
  }

  void check_run_stops_cleanly(int sig) {
    const auto [seconds, r] = signal_while_adapter_sleeps(
        {"run", "--jobs", "1", "--impl", adapter(), "--size", "tiny", "--adapter-timeout", "20", "--out", (dir_ / "out").string()},
        sig);
    EXPECT_LT(seconds, 1.0) << "r3fuzz waited for the adapter instead of stopping";
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // nothing failed: the interruption is no finding
    EXPECT_NE(r.out.find("0 cases (interrupted)"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("adapter_error"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("result: 0 failing and 0 latent findings (0 failing and 0 latent signatures) in 0 cases "
                         "(seed 1, profile vllm): exit 0"),
              std::string::npos)
        << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << "nothing was found, so nothing is written";
    expect_no_adapter_left();
  }

  const r3::test::ScratchDir scratch_{"r3fuzz-signals"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(Signals, CtrlCStopsRunWithinASecondWhileTheAdapterSleeps) { check_run_stops_cleanly(SIGINT); }
TEST_F(Signals, SigtermStopsRunLikeCtrlC) { check_run_stops_cleanly(SIGTERM); }
TEST_F(Signals, SighupStopsRunLikeCtrlC) { check_run_stops_cleanly(SIGHUP); }

// replay has no summary to save: it ends as the signal says, with its adapter killed first.
TEST_F(Signals, SigtermDuringReplayKillsTheAdapterToo) {
  const fs::path c = scratch_.write("case.json", R"({"format": "r3fuzz-case/1",
    "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false}, "model": {"layers": 1, "top_k": 1, "experts": 8},
    "max_num_tokens": 1, "tokens": [1], "padding": "none", "path": "single", "layer": 0})");
  const auto [seconds, r] = signal_while_adapter_sleeps({"replay", c.string(), "--impl", adapter()}, SIGTERM);
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.out << r.err;
  expect_no_adapter_left();
}

}  // namespace
