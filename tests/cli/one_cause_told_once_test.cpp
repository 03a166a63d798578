// End-to-end tests that one cause is told once (docs/SECURITY.md, "What `expect` means under
// `--impl`", last part), not once per file or case it refuses: in replay, an --impl that is no
// implementation is one usage error before any file, and a cause that refuses many files (an
// implementation of the other engine, a command named in the files) is printed once with every
// file it refused, each still named; in seed, a profile of the other engine than the
// deployment's is one error, where it was 52 identical lines for the example deployment.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using Output = r3::test::BinaryRun;

// A small vLLM case that every implementation passes, with `tail` before its closing brace.
std::string small_case(const std::string& tail = "") {
  return R"({"format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false},
 "model": {"layers": 2, "top_k": 1, "experts": 8}, "max_num_tokens": 4, "tokens": [1], "padding": "none",
 "path": "single", "layer": 0)" + tail + "}";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class CauseToldOnce : public r3::test::WorkDirFixture {
 protected:
  CauseToldOnce() : WorkDirFixture("r3fuzz-cause-once") {}
  void SetUp() override {
    WorkDirFixture::SetUp();
    for (const char* name : {"a", "b", "c"}) write(std::string("cases/") + name + ".json", small_case());
  }
};

TEST_F(CauseToldOnce, AnUnknownImplIsOneErrorBeforeAnyFile) {
  const Output o = run("replay cases --impl bogus");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(count(o.err, "unknown implementation"), 1u) << o.err;  // was once per file
  EXPECT_EQ(o.err.rfind("r3fuzz replay: --impl bogus: unknown implementation; known: ", 0), 0u) << o.err;
  EXPECT_EQ(o.out, "");
}

TEST_F(CauseToldOnce, AnImplementationOfTheOtherEngineIsToldOnceWithEveryFile) {
  const Output o = run("replay cases --impl sglang-fixed");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err,
            "r3fuzz replay: sglang-fixed models another engine than the case's (vllm): 3 case files:\n"
            "  cases/a.json\n  cases/b.json\n  cases/c.json\n"
            "r3fuzz replay: 3 files or paths could not be replayed (listed above)\n");
  EXPECT_EQ(o.out, "replay: 3 case files, 0 expectations checked, 0 unexpected, 3 could not be replayed: exit 2\n");
}

TEST_F(CauseToldOnce, FilesNamingACommandAreListedUnderTheRuleOnce) {
  const std::string expect = R"(, "expect": {"impl": "IMPL", "verdict": "pass", "severity": ""})";
  auto naming = [&](const std::string& impl) {
    std::string e = expect;
    return small_case(e.replace(e.find("IMPL"), 4, impl));
  };
  write("cases/a.json", naming("external:touch PWNED"));
  write("cases/b.json", naming("external:touch PWNED"));
  write("cases/c.json", naming("gpu:external:touch OTHER"));
  const Output o = run("replay cases");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_FALSE(fs::exists(work_ / "PWNED"));
  EXPECT_EQ(o.err,
            "r3fuzz replay: 3 case file(s) not run: their expect.impl names an external command; r3fuzz runs "
            "commands only from its command line: pass --impl with that name, or --allow-external-from-files, to "
            "run it:\n"
            "  cases/a.json: expect.impl \"external:touch PWNED\"\n"
            "  cases/b.json: expect.impl \"external:touch PWNED\"\n"
            "  cases/c.json: expect.impl \"gpu:external:touch OTHER\"\n");
  EXPECT_EQ(count(o.out, ": not run: needs --allow-external-from-files\n"), 3u) << o.out;
}

TEST_F(CauseToldOnce, SeedRefusesAProfileOfTheOtherEngineOnce) {
  const fs::path deployment =
      fs::path(R3FUZZ_SOURCE_DIR) / "examples" / "deployments" / "sglang-deepseek-r1-dp8-deepep.json";
  const Output o = run("seed --deployment '" + deployment.string() + "' --profile vllm --out o");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz seed: --profile vllm: every case of " + deployment.string() +
                       " is an sglang step, and profile vllm is vllm's (use a profile of the deployment's engine, "
                       "or any)\n");  // was "52 step(s) not seeded:" and 52 copies of one line
  EXPECT_EQ(o.out, "");
  EXPECT_TRUE(fs::is_empty(work_ / "o"));
}

}  // namespace
