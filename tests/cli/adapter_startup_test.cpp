// --adapter-startup-timeout bounds the adapter's hello, and only the hello: an engine whose imports
// take longer than the default 30 s can be given more, and every reply after the hello keeps
// --adapter-timeout's deadline (docs/adapter-protocol.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;

// Answers the hello after two seconds (an engine importing), then never replies again.
constexpr const char* kSlowHello = R"(read hello
sleep 2
echo '{"type":"hello","protocol":"r3fuzz-adapter/1","name":"slow hello"}'
exec sleep 1000
)";

class AdapterStartup : public ::testing::Test {
 protected:
  AdapterStartup() { scratch_.write("slow_hello.sh", kSlowHello); }

  std::string adapter() const { return "external:sh '" + (dir_ / "slow_hello.sh").string() + "'"; }

  r3::test::BinaryRun run(const std::vector<std::string>& timeouts) const {
    std::vector<std::string> args = {"run",    "--jobs",      "1", "--impl", adapter(), "--size", "tiny",
                                     "--cases", "1", "--no-shrink", "--out", (dir_ / "out").string()};
    args.insert(args.end(), timeouts.begin(), timeouts.end());
    return r3::test::run_binary(R3FUZZ_BINARY, args, dir_);
  }

  const r3::test::ScratchDir scratch_{"r3fuzz-adapter-startup"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(AdapterStartup, AHelloLaterThanTheStartupTimeoutIsAUsageError) {
  const r3::test::BinaryRun r = run({"--adapter-startup-timeout", "0.5"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "r3fuzz run: --impl " + adapter() + ": no reply to the hello within 0.5 s\n");
}

TEST_F(AdapterStartup, ALongerStartupTimeoutWaitsForTheHelloAndRepliesKeepTheirOwnDeadline) {
  const r3::test::BinaryRun r = run({"--adapter-startup-timeout", "10", "--adapter-timeout", "0.5"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // the hello came; the first capture request got no reply
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("verdicts of " + adapter() + ": adapter_error (failure) 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(adapter() + " failed to run: no reply to request 1 within 0.5 s"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("no reply to the hello"), std::string::npos) << r.out;
}

}  // namespace
