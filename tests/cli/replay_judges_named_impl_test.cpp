// End-to-end tests of what a file's "expect" means under `replay --impl` (docs/SECURITY.md, "What
// `expect` means under `--impl`"): an implementation named on the command line is judged on every
// file against the reference; a file's "expect" speaks only for the implementation it names, so a
// case file can hide no other implementation's failure, in the exit code or in the JUnit report.
// Files come first on these command lines, the form that worked before --impl took one value per
// use (tests/cli/repeatable_options_test.cpp).
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using Output = r3::test::BinaryRun;

const fs::path kRegression = fs::path(R3FUZZ_SOURCE_DIR) / "corpus" / "regression";

// The micro-batch overwrite entry (vllm-50874 gives wrong_rows, r3-fixed passes) with its
// "expect" replaced by `expect`.
std::string microbatch_expecting(const std::string& expect) {
  std::string text = r3::test::read_file_bytes(kRegression / "vllm-50874-wrong-rows-microbatch-overwrite.json");
  const size_t at = text.find("\"expect\":");
  return text.substr(0, at) + "\"expect\": " + expect + "\n}\n";
}

const std::string kExpectFixedPasses = R"({"impl": "r3-fixed", "verdict": "pass", "severity": ""})";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ReplayJudgesNamedImpl : public r3::test::WorkDirFixture {
 protected:
  ReplayJudgesNamedImpl() : WorkDirFixture("r3fuzz-replay-named-impl") {}
  std::string junit() const { return r3::test::read_file_bytes(work_ / "r.xml"); }
};

// The issue's entry: "expect" names r3-fixed, and --impl vllm-50874 was exit 0, failures="0".
TEST_F(ReplayJudgesNamedImpl, AnImplementationTheExpectDoesNotNameMustPass) {
  write("case.json", microbatch_expecting(kExpectFixedPasses));
  const Output o = run("replay case.json --impl vllm-50874 --junit r.xml");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("case.json: vllm-50874: wrong_rows (failure) [vllm-50874/wrong_rows/local/"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find(" (concrete): FAILS, and the file's \"expect\" is for r3-fixed\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\nreplay: 1 case file, 0 expectations checked, 1 unexpected, 0 could not be replayed: exit 1\n"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.err, "");
  EXPECT_NE(junit().find(R"(<testsuites name="r3fuzz replay" tests="1" failures="1" errors="0">)"), std::string::npos)
      << junit();
  EXPECT_NE(junit().find(R"(<failure message="wrong_rows (failure): )"), std::string::npos) << junit();
}

// Both named: r3-fixed is held to the file's word, vllm-50874 to the reference.
TEST_F(ReplayJudgesNamedImpl, TheNamedImplementationKeepsItsExpectAndTheOtherIsJudged) {
  write("case.json", microbatch_expecting(kExpectFixedPasses));
  const Output o = run("replay case.json --impl r3-fixed --impl vllm-50874 --junit r.xml");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("case.json: r3-fixed: pass (concrete): as expected\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(": FAILS, and the file's \"expect\" is for r3-fixed\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("replay: 1 case file, 1 expectation checked, 1 unexpected, 0 could not be replayed: exit 1\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(junit().find(R"(tests="2" failures="1" errors="0")"), std::string::npos) << junit();
}

// When the names match, "expect" is honoured as before: a known bug of that implementation.
TEST_F(ReplayJudgesNamedImpl, AKnownBugOfTheNamedImplementationStaysExpected) {
  write("case.json", microbatch_expecting(R"({"impl": "vllm-50874", "verdict": "wrong_rows", "severity": "failure"})"));
  Output o = run("replay case.json --impl vllm-50874");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find(" (concrete): as expected\n"), std::string::npos) << o.out;
  // Another name is another implementation, which must pass: vllm-50874 with a fault injected does
  // not get the file's expectation (nor would gpu:vllm-50874, the GPU pipeline taking its decisions).
  o = run("replay case.json --impl vllm-50874+no-trim");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_EQ(count(o.out, ": FAILS, and the file's \"expect\" is for vllm-50874\n"), 1u) << o.out;
  // Without --impl, the file's implementation alone is judged, as before: the corpus stays clean.
  write("fixed.json", microbatch_expecting(kExpectFixedPasses));
  o = run("replay fixed.json");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(count(o.out, ": as expected\n"), 1u) << o.out;
  EXPECT_EQ(o.out.find("vllm-50874"), std::string::npos) << o.out;
}

// The issue's adapter: wrong on every entry, it passed `replay --impl external:ADAPTER
// corpus/regression/`. Every vLLM entry names another implementation than the adapter.
TEST_F(ReplayJudgesNamedImpl, AnAdapterWrongOnEveryEntryFailsOnEveryEntry) {
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(kRegression)) {
    if (e.path().filename().string().rfind("vllm-", 0) != 0) continue;
    write("reg/" + e.path().filename().string(), r3::test::read_file_bytes(e.path()));
    ++entries;
  }
  ASSERT_GE(entries, 5u);
  // An adapter that captures no row at all.
  write("empty.py",
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    if req.get('type') == 'hello':\n"
        "        print(json.dumps({'type': 'hello', 'protocol': 'r3fuzz-adapter/1', 'name': 'empty', 'version': '1'}), "
        "flush=True)\n"
        "        continue\n"
        "    print(json.dumps({'id': req['id'], 'rows': []}), flush=True)\n");
  const Output o = run("replay reg --impl 'external:python3 empty.py' --junit r.xml");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_EQ(count(o.out, ": FAILS, and the file's \"expect\" is for vllm-"), entries) << o.out;
  EXPECT_NE(o.out.find("replay: " + std::to_string(entries) + " case files, 0 expectations checked, " +
                       std::to_string(entries) + " unexpected, 0 could not be replayed: exit 1\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(junit().find("tests=\"" + std::to_string(entries) + "\" failures=\"" + std::to_string(entries) + "\""),
            std::string::npos)
      << junit();
}

}  // namespace
