// End-to-end tests of bad command lines (issue 15, items 3, 6, 9, 11 and 17): the exact inputs
// the adversarial pass tried, each refused with exit 2 and a message that names the flag and
// says what is wrong, before anything runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

using Ran = r3::test::BinaryRun;

class BadFlags : public ::testing::Test {
 protected:
  Ran run(const std::vector<std::string>& args) { return r3::test::run_binary(R3FUZZ_BINARY, args, scratch_.path()); }

  // Exit 2, nothing on stdout, and `message` as the first line of stderr.
  void expect_usage_error(const std::vector<std::string>& args, const std::string& message) {
    std::string line;
    for (const std::string& a : args) line += a + " ";
    const Ran r = run(args);
    EXPECT_EQ(r.exit_code, 2) << line << r.out << r.err;
    EXPECT_EQ(r.out, "") << line;
    EXPECT_EQ(r.err.substr(0, r.err.find('\n')), message) << line;
  }

  const r3::test::ScratchDir scratch_{"r3fuzz-bad-flags"};
};

// Item 3: a duration must be a finite number of seconds above 0, and at most a bound.
TEST_F(BadFlags, DurationsAreFiniteAndPositive) {
  expect_usage_error({"run", "--time", "nan"}, "--time: nan is not a finite number of seconds");
  expect_usage_error({"run", "--time", "inf"}, "--time: inf is not a finite number of seconds");
  expect_usage_error({"run", "--time", "0"}, "--time: 0 is out of range (0, 2592000] seconds");
  expect_usage_error({"run", "--adapter-timeout", "nan"}, "--adapter-timeout: nan is not a finite number of seconds");
  expect_usage_error({"run", "--adapter-timeout", "1e300"}, "--adapter-timeout: 1e300 is out of range (0, 3600] seconds");
  expect_usage_error({"run", "--adapter-timeout", "0"}, "--adapter-timeout: 0 is out of range (0, 3600] seconds");
  expect_usage_error({"run", "--adapter-startup-timeout", "0"}, "--adapter-startup-timeout: 0 is out of range (0, 3600] seconds");
  expect_usage_error({"run", "--adapter-startup-timeout", "inf"}, "--adapter-startup-timeout: inf is not a finite number of seconds");
  expect_usage_error({"shrink", "--max-seconds", "0", "case.json"}, "--max-seconds: 0 is out of range (0, 86400] seconds");
}

// Item 11: integers never wrap or saturate; a non-number is called that, in a few words.
TEST_F(BadFlags, IntegersOutOfRangeAreRefusedNotWrapped) {
  expect_usage_error({"run", "--seed", "-1"}, "--seed: -1 is out of range [0, 2^64-1]");
  expect_usage_error({"run", "--seed", "18446744073709551616"},
                     "--seed: 18446744073709551616 is out of range [0, 2^64-1]");
  expect_usage_error({"run", "--cases", "99999999999999999999"},
                     "--cases: 99999999999999999999 is out of range [1, 2^63-1]");
  expect_usage_error({"mutants", "--first-seed", "-1"}, "--first-seed: -1 is out of range [0, 2^64-1]");
  expect_usage_error({"run", "--time", "abc"}, "--time: not a number: abc");
  expect_usage_error({"run", "--cases", "0x10"}, "--cases: not a whole number: 0x10");
  // The largest seed is taken as it is, not read in another base or clamped.
  const Ran largest = run({"run", "--seed", "18446744073709551615", "--cases", "1", "--impl", "r3-fixed", "--out",
                           (scratch_.path() / "out").string()});
  EXPECT_EQ(largest.exit_code, 0) << largest.err;
  EXPECT_NE(largest.out.find("r3fuzz run: seed 18446744073709551615,"), std::string::npos) << largest.out;
  const Ran octal_looking = run({"run", "--seed", "010", "--cases", "1", "--impl", "r3-fixed"});
  EXPECT_NE(octal_looking.out.find("r3fuzz run: seed 10,"), std::string::npos) << octal_looking.out;
}

// Item 6: a space too large to list is refused upfront with its size, counted without listing
// it (this used to grow to 24 GB).
TEST_F(BadFlags, ExhaustRefusesASpaceTooLargeToList) {
  expect_usage_error({"exhaust", "--max-dp", "8", "--max-tp", "8", "--max-tokens", "32", "--max-m", "32"},
                     "r3fuzz exhaust: the bounds D<=8 T<=8 sum(tokens)<=32 M<=32 L=2 K=1 E=4, profile vllm enumerate "
                     "up to 15,883,108,587,188 cases in 2,197,609,381 token layouts; at most 1,000,000,000 cases in "
                     "5,000,000 layouts: lower --max-dp, --max-tp, --max-tokens or --max-m");
}

// Item 9: an unknown carrier measured nothing and reported kill_rate 1.0.
TEST_F(BadFlags, MutantsNamesAnUnknownCarrier) {
  const Ran r = run({"mutants", "--carrier", "nope"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("r3fuzz mutants: --carrier nope: unknown implementation; known: vllm-50874,", 0), 0) << r.err;
}

// Item 17: the flag that named the implementation is the one the message names.
TEST_F(BadFlags, ExhaustAgainstNamesItsOwnFlag) {
  const Ran r = run({"exhaust", "--against", "nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("r3fuzz exhaust: --against nope: unknown implementation; known: ", 0), 0) << r.err;
}

// Item 17: the same implementation twice would be judged twice; it is refused.
TEST_F(BadFlags, AnImplementationGivenTwiceIsRefused) {
  expect_usage_error({"run", "--impl", "r3-fixed", "--impl", "r3-fixed"}, "r3fuzz run: --impl r3-fixed: given twice");
  expect_usage_error({"replay", "missing.json", "--impl", "r3-fixed", "--impl", "r3-fixed"},
                     "r3fuzz replay: --impl r3-fixed: given twice");
}

// Item 17: an unknown command is named; --version prints the CMake project version.
TEST_F(BadFlags, UnknownCommandAndVersion) {
  expect_usage_error({"bogus"},
                     "r3fuzz: unknown command 'bogus'; commands: explain, seed, exhaust, mutants, run, replay, shrink, export");
  const Ran version = run({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out, "r3fuzz " R3FUZZ_VERSION "\n");
}

// Item 17: --help names gpu:POLICY, as the README does.
TEST_F(BadFlags, HelpNamesPrefixArgumentsAsTheReadmeDoes) {
  const Ran help = run({"run", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("external:COMMAND"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("gpu:COMMAND"), std::string::npos) << help.out;
#if R3FUZZ_HAVE_GPU
  EXPECT_NE(help.out.find("gpu:POLICY"), std::string::npos) << help.out;
#endif
}

}  // namespace
