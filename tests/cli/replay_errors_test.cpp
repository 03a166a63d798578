// End-to-end tests of replay on bad and unexpected input (issue 15, items 10 and 17): every bad
// file is reported and the rest still run; a failure no "expect" documents fails the replay.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Ran = r3::test::BinaryRun;

// A regression entry: vllm-50874 fails it (capacity), as its "expect" says.
constexpr const char* kKnownFailure = R"({"format": "r3fuzz-case/1",
  "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false}, "model": {"layers": 1, "top_k": 1, "experts": 8},
  "max_num_tokens": 1, "tokens": [1], "padding": {"cudagraph": [2]}, "path": "single", "layer": 0)";
constexpr const char* kExpect = R"(, "expect": {"impl": "vllm-50874", "verdict": "capacity", "severity": "failure"}})";

class ReplayErrors : public ::testing::Test {
 protected:
  Ran run(const std::vector<std::string>& args) { return r3::test::run_binary(R3FUZZ_BINARY, args, dir_); }

  const r3::test::ScratchDir scratch_{"r3fuzz-replay-errors"};
  const fs::path dir_ = scratch_.path();
};

// Item 10: replay DIR stopped at the first invalid file.
TEST_F(ReplayErrors, EveryBadFileIsReportedAndTheRestReplayed) {
  const fs::path cases = dir_ / "cases";
  fs::create_directories(cases);
  scratch_.write("cases/a-good.json", std::string(kKnownFailure) + kExpect);
  scratch_.write("cases/b-not-json.json", "{not json");
  scratch_.write("cases/c-good.json", std::string(kKnownFailure) + kExpect);
  scratch_.write("cases/d-no-topology.json", R"({"format": "r3fuzz-case/1"})");
  const Ran r = run({"replay", cases.string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find((cases / "a-good.json").string() + ": vllm-50874: capacity (failure)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find((cases / "c-good.json").string() + ": vllm-50874: capacity (failure)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("replay: 4 case files, 2 expectations checked, 0 unexpected, 2 could not be replayed: exit 2"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("r3fuzz replay: " + (cases / "b-not-json.json").string() + ": invalid JSON"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("r3fuzz replay: " + (cases / "d-no-topology.json").string() + ": topology: required key is missing"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("r3fuzz replay: 2 files or paths could not be replayed (listed above)"), std::string::npos)
      << r.err;
}

// Item 17: a failing case without "expect" replayed with exit 0.
TEST_F(ReplayErrors, AFailureWithoutExpectFailsTheReplay) {
  const fs::path c = scratch_.write("no-expect.json", std::string(kKnownFailure) + "}");
  const Ran r = run({"replay", c.string(), "--impl", "vllm-50874"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(c.string() + ": vllm-50874: capacity (failure) [vllm-50874/capacity/single/error] (concrete): "
                                    "FAILS, and the file has no \"expect\""),
            std::string::npos)
      << r.out;
  // The same case passing on another implementation is a clean replay.
  const Ran clean = run({"replay", c.string(), "--impl", "r3-fixed"});
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
}

}  // namespace
