// End-to-end tests of the three single implementations of docs/SECURITY.md ("One write path, one
// terminal escape, one XML character filter"): the real binary on hostile files, its exit code
// and its exact words.
//   - No file forges a line on stderr: every error line is escaped in main(), line ends included.
//   - C1 controls (U+009B, the 8-bit CSI, and a raw 0x9b byte) never reach the terminal raw.
//   - --junit FILE and export --out FILE are written through write_new_file: a FIFO there is
//     refused at once, a symbolic or hard link is never written through.
//   - The JUnit XML stays well-formed whatever a file name or expect.impl holds (U+FFFF).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Output = r3::test::BinaryRun;

const std::string kFake = "x\nFAKE LINE: all good";

const json kSmallCase = json::parse(R"({"format": "r3fuzz-case/1",
 "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false}, "model": {"layers": 2, "top_k": 1, "experts": 8},
 "max_num_tokens": 4, "tokens": [1], "padding": "none", "path": "single", "layer": 0})");

const json kSglangCase = json::parse(R"({"format": "r3fuzz-case/1", "engine": "sglang",
 "topology": {"dp": 1, "tp": 2, "dp_attention": false, "a2a": "deepep"}, "model": {"layers": 1, "top_k": 1, "experts": 1},
 "forward": "decode", "requests": [1], "tbo": false, "chunked_prefill_size": 1, "max_running_requests": 1, "layer": 0,
 "profile": "sglang"})");

const json kSglangDeployment = json::parse(R"({"format": "r3fuzz-deployment/1", "engine": "sglang", "name": "d",
 "topology": {"dp": 2, "tp": 2, "dp_attention": true, "a2a": "deepep"}, "model": {"layers": 4, "top_k": 2, "experts": 8},
 "cuda_graph": {"decode": "sglang-default", "decode_max_bs": 8}, "tbo": false, "chunked_prefill_size": 64,
 "max_running_requests": 8, "traffic": {"decode_requests": [1, 2], "prefill_lengths": [8]}})");

class EscapesAndWritePath : public r3::test::WorkDirFixture {
 protected:
  EscapesAndWritePath() : WorkDirFixture("r3fuzz-escapes-writes") {}

  void write_json(const std::string& name, const json& doc) { write(name, doc.dump()); }
  // run(), under `timeout`: the binary before the fix waits forever on a FIFO (exit 124, or 137
  // where SIGTERM cannot end it).
  Output run_guarded(const std::string& args) {
    const std::string cmd = "cd '" + work_.string() + "' && timeout -k 5 20 '" + std::string(R3FUZZ_BINARY) + "' " +
                            args + " >'" + (dir_ / "stdout").string() + "' 2>'" + (dir_ / "stderr").string() + "'";
    return r3::test::captured_run(r3::test::exit_code_of_wait_status(std::system(cmd.c_str())), dir_);
  }
  // A FIFO at `name`, and whatever ends up blocked writing to it released after the test, so a
  // binary that waits on it (the one before the fix) leaves no process behind.
  void make_fifo(const std::string& name) {
    ASSERT_EQ(mkfifo((work_ / name).c_str(), 0644), 0);
    fifos_.push_back(work_ / name);
  }
  void TearDown() override {
    for (const fs::path& fifo : fifos_) {
      const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
      if (fd >= 0) ::close(fd);
    }
  }
  std::vector<fs::path> fifos_;
};

// True when `text` holds what a terminal acts on: a C0 control but '\n', DEL, a C1 control
// (U+0080..U+009F), U+2028 or U+2029, or a byte outside well-formed UTF-8 (a raw 0x9b).
bool reaches_terminal_raw(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t n = lead < 0x80 ? 1 : lead >= 0xc2 && lead < 0xe0 ? 2 : lead >= 0xe0 && lead < 0xf0 ? 3
                                   : lead >= 0xf0 && lead < 0xf5 ? 4 : 0;
    if (n == 0 || i + n > text.size()) return true;
    uint32_t cp = n == 1 ? lead : lead & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xc0) != 0x80) return true;
      cp = (cp << 6) | (b & 0x3f);
    }
    if ((cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029) return true;
    i += n;
  }
  return false;
}

const std::string kCaseKeys =
    "(allowed: format, engine, topology, model, max_num_tokens, tokens, padding, idle_dummy, path, monolithic, layer, "
    "microbatches, dp_chunk, metadata, profile, note, expect)";

// An unknown key holding a newline: every command that reads a case prints it on one line.
TEST_F(EscapesAndWritePath, AnUnknownKeyNeverForgesALineOnStderr) {
  json doc = kSmallCase;
  doc[kFake] = 1;
  write_json("forge.json", doc);
  const std::string error = "forge.json: case: unknown key \"x\\nFAKE LINE: all good\" " + kCaseKeys + "\n";
  for (const std::string& command : std::vector<std::string>{"explain forge.json", "explain forge.json --json", "export forge.json --pytest",
                                     "shrink forge.json --impl r3-fixed --out s"}) {
    const Output o = run(command);
    EXPECT_EQ(o.exit_code, 2) << command;
    const std::string name = command.substr(0, command.find(' '));
    EXPECT_EQ(o.err, "r3fuzz " + name + ": " + error) << command;  // was two lines, the second "FAKE LINE: ..."
  }
  Output o = run("seed --to-binary --out b forge.json");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz seed: " + error);
  o = run("replay forge.json");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz replay: " + error + "r3fuzz replay: 1 file or path could not be replayed (listed above)\n");
}

// a2a, forward and profile values holding a newline, in a case and in a deployment.
TEST_F(EscapesAndWritePath, SglangValuesNeverForgeALineOnStderr) {
  json doc = kSglangCase;
  doc["topology"]["a2a"] = kFake;
  write_json("a2a.json", doc);
  Output o = run("explain a2a.json");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz explain: a2a.json: topology.a2a: \"x\\nFAKE LINE: all good\" is not one of none, deepep, "
                   "mooncake, nixl, mori, flashinfer, megamoe, pplx, ascend_fuseep\n");
  doc = kSglangCase;
  doc["forward"] = kFake;
  write_json("forward.json", doc);
  o = run("export forward.json --pytest");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz export: forward.json: forward: \"x\\nFAKE LINE: all good\" is not one of extend, decode, verify\n");
  doc = kSglangCase;
  doc["profile"] = kFake;
  write_json("profile.json", doc);
  o = run("shrink profile.json --impl sglang-fixed --out s");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz shrink: profile.json: profile: \"x\\nFAKE LINE: all good\" is not one of vllm, vllm-legacy, "
                   "any, sglang, sglang-miles, trtllm, ascend, ascend-mrv2-rounded, ascend-0.26\n");

  json deployment = kSglangDeployment;
  deployment["topology"]["a2a"] = kFake;
  write_json("deployment.json", deployment);
  o = run("seed --deployment deployment.json --out c");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz seed: --deployment deployment.json: topology.a2a: \"x\\nFAKE LINE: all good\" is not one "
                   "of none, deepep, mooncake, nixl, mori, flashinfer, megamoe, pplx, ascend_fuseep\n");
}

// The same escape for what the command line carries (a glob may expand to such a name) and for
// an error that lists several lines: each line of the list is main()'s, each item escaped.
TEST_F(EscapesAndWritePath, CommandLineTextsAndListedErrorsNeverForgeALine) {
  Output o = run("run --cases 1 --impl \"$(printf 'x\\nFAKE LINE: all good')\"");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err.find("\nFAKE"), std::string::npos) << o.err;
  EXPECT_TRUE(o.err.starts_with("r3fuzz run: --impl x\\nFAKE LINE: all good: unknown implementation")) << o.err;
  o = run("explain a \"$(printf 'b\\nFAKE LINE\\302\\233')\"");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "The following argument was not expected: b\\nFAKE LINE\\u009b\nRun with --help for more information.\n");

  write("d.json", R"({"format": "r3fuzz-deployment/1", "name": "d",
 "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false}, "model": {"layers": 4, "top_k": 2, "experts": 64},
 "max_num_tokens": 16, "path": "gathered", "traffic": {"prefill_lengths": [4]}})");
  write("log.jsonl", "{\"num_tokens_across_dp\": [1, 2], \"y\\nFAKE LINE: all good\": 1}\n{\"num_tokens_across_dp\": [1, 2, 3]}\n");
  o = run("seed --deployment d.json --log log.jsonl --out o");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz seed: 2 step(s) not seeded:\n"
                   "  log.jsonl: line 1: unknown key \"y\\nFAKE LINE: all good\" (allowed: step, num_tokens_across_dp, "
                   "local_sizes)\n"
                   "  log.jsonl: line 2: num_tokens_across_dp has 3 entries, expected 2 (dp)\n");
}

// U+009B in a note reaches explain as the text \u009b; a raw 0x9b byte in a file name reaches
// replay DIR as \x9b, on stdout and stderr alike.
TEST_F(EscapesAndWritePath, C1ControlsNeverReachTheTerminalRaw) {
  json doc = kSmallCase;
  doc["note"] = "csi \xc2\x9b" "2J nel \xc2\x85 ls \xe2\x80\xa8 end";
  write_json("c1.json", doc);
  Output o = run("explain c1.json");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("note: csi \\u009b2J nel \\u0085 ls \\u2028 end\n"), std::string::npos) << o.out;
  EXPECT_FALSE(reaches_terminal_raw(o.out)) << o.out;
  o = run("explain c1.json --json");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(reaches_terminal_raw(o.out)) << o.out;

  write_json("cases/a\x9b" "2J.json", kSmallCase);
  write("cases/bad\x9b" "2J.json", "{");
  o = run("replay cases");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.out.find("cases/a\\x9b2J.json: vllm-50874: pass (concrete)\n"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("r3fuzz replay: cases/bad\\x9b2J.json: "), std::string::npos) << o.err;
  EXPECT_FALSE(reaches_terminal_raw(o.out)) << o.out;
  EXPECT_FALSE(reaches_terminal_raw(o.err)) << o.err;
}

// A FIFO at --junit (run, replay) or export --out: refused at once, never waited on.
TEST_F(EscapesAndWritePath, AFifoAtJunitOrExportOutIsRefusedNotWaitedOn) {
  write_json("case.json", kSmallCase);
  make_fifo("report.xml");
  make_fifo("test_case.py");
  const std::string refusal = ": refusing to replace a FIFO (r3fuzz writes only regular files, each one new)\n";
  Output o = run_guarded("replay case.json --junit report.xml");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.err, "r3fuzz replay: --junit report.xml" + refusal);
  o = run_guarded("run --cases 5 --impl r3-fixed --out o --junit report.xml");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.err, "r3fuzz run: --junit report.xml" + refusal);
  o = run_guarded("export case.json --pytest --out test_case.py");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.err, "r3fuzz export: --out test_case.py" + refusal);
}

// A symbolic link at those paths is refused; a hard link is replaced by a new file. Either way
// the file behind the link keeps its bytes.
TEST_F(EscapesAndWritePath, ALinkAtJunitOrExportOutIsNeverWrittenThrough) {
  write_json("case.json", kSmallCase);
  write("outside/victim", "victim's bytes\n");
  const std::string refusal = ": refusing to replace a symbolic link (r3fuzz writes only regular files, each one new)\n";
  struct Writer {
    std::string command, flag, path;
  };
  for (const Writer& w : {Writer{"replay case.json --junit ", "replay: --junit ", "r.xml"},
                          Writer{"run --cases 5 --impl r3-fixed --out o --junit ", "run: --junit ", "r.xml"},
                          Writer{"export case.json --pytest --out ", "export: --out ", "t.py"}}) {
    fs::remove(work_ / w.path);
    fs::create_symlink(work_ / "outside/victim", work_ / w.path);
    Output o = run(w.command + w.path);
    EXPECT_EQ(o.exit_code, 2) << w.command << o.err;
    EXPECT_EQ(o.err, "r3fuzz " + w.flag + w.path + refusal) << w.command;
    EXPECT_EQ(r3::test::read_file_bytes(work_ / "outside/victim"), "victim's bytes\n") << w.command;

    fs::remove(work_ / w.path);
    fs::create_hard_link(work_ / "outside/victim", work_ / w.path);
    o = run(w.command + w.path);
    EXPECT_EQ(o.exit_code, 0) << w.command << o.err;
    EXPECT_EQ(r3::test::read_file_bytes(work_ / "outside/victim"), "victim's bytes\n") << w.command;
    EXPECT_EQ(fs::hard_link_count(work_ / "outside/victim"), 1u) << w.command << ": the link was replaced";
    const std::string written = r3::test::read_file_bytes(work_ / w.path);
    EXPECT_NE(written.find(w.path == "t.py" ? "import pytest" : "<testsuites"), std::string::npos) << written;
  }
}

// run --adapter-log FILE is opened by the adapter's process before it starts, and r3fuzz waits
// for that start: a FIFO there blocked r3fuzz itself, where even SIGTERM could not end it.
TEST_F(EscapesAndWritePath, AFifoAtAdapterLogIsRefusedNotWaitedOn) {
  write("adapter.py", "import sys\nfor line in sys.stdin: pass\n");
  make_fifo("adapter.log");
  const Output o = run_guarded("run --cases 3 --impl 'external:python3 adapter.py' --adapter-log adapter.log --out o");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.err, "r3fuzz run: --impl external:python3 adapter.py: --adapter-log adapter.log: refusing to append to "
                   "a FIFO\n");
}

bool parses_as_xml(const fs::path& file) {
  const std::string cmd = "python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' '" +
                          file.string() + "' 2>/dev/null";
  return std::system(cmd.c_str()) == 0;
}

// U+FFFF in a file name and in expect.impl: the report parses, and shows \uffff where it was.
TEST_F(EscapesAndWritePath, TheJunitReportStaysWellFormedWhateverAFileHolds) {
  write_json("cases/case\xef\xbf\xbf.json", kSmallCase);
  Output o = run("replay cases --junit names.xml");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(parses_as_xml(work_ / "names.xml")) << r3::test::read_file_bytes(work_ / "names.xml");
  std::string xml = r3::test::read_file_bytes(work_ / "names.xml");
  EXPECT_NE(xml.find("name=\"cases/case\\uffff.json\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find("\xef\xbf\xbf"), std::string::npos) << xml;

  json doc = kSmallCase;
  doc["expect"] = {{"impl", "r3-fixed\xef\xbf\xbf\xef\xbf\xbe"}, {"verdict", "pass"}, {"severity", ""}};
  write_json("impl.json", doc);
  o = run("replay impl.json --junit impl.xml");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_TRUE(parses_as_xml(work_ / "impl.xml")) << r3::test::read_file_bytes(work_ / "impl.xml");
  xml = r3::test::read_file_bytes(work_ / "impl.xml");
  EXPECT_NE(xml.find("impl.json: --impl r3-fixed\\uffff\\ufffe: unknown implementation"), std::string::npos) << xml;
}

}  // namespace
