// End-to-end tests of issue 22 ("Hostile input, second pass"): the real binary on the exact
// inputs of the issue, its exit code and words, and nothing written outside --out
// (docs/SECURITY.md). The memory items run under `ulimit -v 4000000` (a 4 GB cap).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/memory_cap.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Output = r3::test::BinaryRun;


class SecondPass : public r3::test::WorkDirFixture {
 protected:
  SecondPass() : WorkDirFixture("r3fuzz-second-pass") {}

  // Every path under work_ (relative), for "nothing written outside --out".
  std::set<std::string> tree() const {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(work_)) out.insert(fs::relative(e.path(), work_).string());
    return out;
  }
  // Paths of `after` not in `before` and under none of `outs`.
  static std::set<std::string> new_outside(const std::set<std::string>& before, const std::set<std::string>& after,
                                           std::initializer_list<std::string> outs) {
    std::set<std::string> extra;
    for (const std::string& p : after) {
      bool inside = before.count(p) != 0;
      for (const std::string& out : outs) inside = inside || p == out || p.starts_with(out + "/");
      if (!inside) extra.insert(p);
    }
    return extra;
  }
  // r3fuzz under a 4 GB cap on virtual memory (the issue's `ulimit -v 4000000`). AddressSanitizer
  // reserves terabytes of address space for its shadow, so the sanitized build (the fuzz preset)
  // runs these without the cap: the memory bounds are checked by the default build.
  Output run_capped(const std::string& args) {
    const std::string cap = r3::test::memory_cap_prefix();
    return run_shell(cap + "exec '" + binary() + "' " + args);
  }
  Output run_shell(const std::string& script) {
    const std::string cmd = "cd '" + work_.string() + "' && sh -c '" + escape_single(script) + "' >'" +
                            (dir_ / "stdout").string() + "' 2>'" + (dir_ / "stderr").string() + "'";
    return r3::test::captured_run(r3::test::exit_code_of_wait_status(std::system(cmd.c_str())), dir_);
  }
  static std::string binary() { return R3FUZZ_BINARY; }
  static std::string escape_single(const std::string& s) {
    std::string out;
    for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out;
  }
};

bool has_control_byte(const std::string& text) {
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if ((u < 0x20 && ch != '\n') || u == 0x7f) return true;
  }
  return false;
}

// An adapter (python3) answering every capture request by `reply(request)`, a Python expression
// of `req` giving the reply object without "id". Unbatched.
std::string adapter(const std::string& reply, const std::string& prelude = "") {
  return "import json, sys, os\n" + prelude +
         "for line in sys.stdin:\n"
         "    req = json.loads(line)\n"
         "    if req.get('type') == 'hello':\n"
         "        print(json.dumps({'type': 'hello', 'protocol': 'r3fuzz-adapter/1', 'name': 't', 'version': '1'}), "
         "flush=True)\n"
         "        continue\n"
         "    out = " + reply + "\n"
         "    out['id'] = req['id']\n"
         "    print(json.dumps(out), flush=True)\n";
}

const std::string kSmallCase = R"({"format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false},
 "model": {"layers": 2, "top_k": 1, "experts": 8}, "max_num_tokens": 4, "tokens": [1], "padding": "none",
 "path": "single", "layer": 0})";

// 1. A hard link in --out is replaced, never written through.
TEST_F(SecondPass, Item1AHardLinkInOutIsReplacedNotWrittenThrough) {
  write("outside/victim", "victim's bytes\n");
  fs::create_directories(work_ / "o");
  fs::create_hard_link(work_ / "outside/victim", work_ / "o/finding-1-spurious_reject.json");
  const auto before = tree();
  const Output o = run("run --cases 300 --jobs 1 --out o");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;  // the default implementations' known findings
  EXPECT_EQ(r3::test::read_file_bytes(work_ / "outside/victim"), "victim's bytes\n");
  EXPECT_EQ(fs::hard_link_count(work_ / "outside/victim"), 1u) << "the link was replaced by a new file";
  EXPECT_NE(r3::test::read_file_bytes(work_ / "o/finding-1-spurious_reject.json").find("r3fuzz-case/1"),
            std::string::npos);
  EXPECT_EQ(new_outside(before, tree(), {"o"}), std::set<std::string>{});
}

// 2. An adapter's branch cannot end the TEST's first-line comment and become code.
TEST_F(SecondPass, Item2AnAdapterBranchStaysInsideTheGeneratedTestsComment) {
  // Rows that write nothing on a case with a real token: wrong_rows, under the adapter's branch.
  write("inject.py", adapter(R"({'branch': 'x\nint injected = system("touch /tmp/INJ");\n//', 'rows': []})"));
  write("in/case.json", kSmallCase);
  const auto before = tree();
  const Output o = run("shrink in/case.json --impl 'external:python3 inject.py' --out out --max-seconds 20");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(new_outside(before, tree(), {"out"}), std::set<std::string>{});
  const std::string test = r3::test::read_file_bytes(work_ / "out/case.min_test.cpp");
  ASSERT_FALSE(test.empty()) << o.out;
  const std::string first_line = test.substr(0, test.find('\n'));
  EXPECT_NE(first_line.find(R"(x\x0aint injected = system("touch /tmp/INJ");\x0a//)"), std::string::npos) << test;
  EXPECT_EQ(test.find("\nint injected"), std::string::npos) << test;
  EXPECT_NE(test.find(R"(EXPECT_EQ(j->branch, "x\nint injected = system(\"touch /tmp/INJ\");\n//");)"),
            std::string::npos)
      << test;
  EXPECT_FALSE(has_control_byte(o.out)) << o.out;
}

// 3. Untrusted text reaches the terminal escaped: expect.impl, file names, adapter texts.
TEST_F(SecondPass, Item3ReplayEscapesAnImplementationNameAndAFileName) {
  std::string c = kSmallCase;
  c.insert(c.rfind('}'), R"(, "expect": {"impl": "r3-fixed\u001b[2J", "verdict": "pass", "severity": ""})");
  write("cases/esc.json", c);
  write("cases/a\x1b[2Jb\nFAKE: pass.json", kSmallCase);
  const Output o = run("replay cases");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_FALSE(has_control_byte(o.out)) << o.out;
  EXPECT_FALSE(has_control_byte(o.err)) << o.err;
  EXPECT_EQ(o.out.find("\nFAKE: pass"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cases/a\\x1b[2Jb\\nFAKE: pass.json: "), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("r3-fixed\\x1b[2J"), std::string::npos) << o.err;
}

TEST_F(SecondPass, Item3RunAndShrinkEscapeAnAdaptersBranchAndError) {
  write("esc.py", adapter(R"({'branch': 'b\u001b[31m', 'rows': []})"));
  write("err.py", adapter(R"({'error': 'e\u001b[2J\nFAKE: pass'})"));
  const Output o = run("run --impl 'external:python3 esc.py' --impl 'external:python3 err.py' --cases 3 --jobs 1 "
                       "--no-shrink --out o");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_FALSE(has_control_byte(o.out)) << o.out;
  EXPECT_NE(o.out.find("b\\x1b[31m"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("e\\x1b[2J\\nFAKE: pass"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("\nFAKE"), std::string::npos) << o.out;
  write("in/case.json", kSmallCase);
  const Output s = run("shrink in/case.json --impl 'external:python3 err.py' --out out --max-seconds 20");
  EXPECT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_FALSE(has_control_byte(s.out)) << s.out;
  EXPECT_FALSE(has_control_byte(s.err)) << s.err;
}

// 4. A copies reply's tp_all_gather claims are judged: the false pass.
const std::string kTp2Idle = R"({"format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 2, "ep": false, "sp": false},
 "model": {"layers": 2, "top_k": 1, "experts": 8}, "max_num_tokens": 4, "tokens": [0], "padding": "none",
 "path": "single", "layer": 0})";

TEST_F(SecondPass, Item4ACopiesReplyWhoseTpRanksDisagreeOnTheGatherIsACollectiveMismatch) {
  write("case.json", kTp2Idle);
  write("copies.py", adapter("{'copies': [], 'tp_all_gather': req['rank']['tp'] == 0}"));
  write("rows.py", adapter("{'rows': [], 'tp_all_gather': req['rank']['tp'] == 0}"));
  for (const std::string script : {"rows.py", "copies.py"}) {
    const Output o = run("replay case.json --impl 'external:python3 " + script + "'");
    EXPECT_EQ(o.exit_code, 1) << script << ": " << o.out << o.err;  // was 0: pass
    EXPECT_NE(o.out.find(": collective_mismatch"), std::string::npos) << script << ": " << o.out;
  }
}

// 5. A FIFO in --out: an error naming it, at once, in run, shrink and seed --to-binary.
TEST_F(SecondPass, Item5AFifoInOutIsRefusedNotWaitedOn) {
  fs::create_directories(work_ / "o");
  ASSERT_EQ(mkfifo((work_ / "o/finding-1-spurious_reject.json").c_str(), 0644), 0);
  const auto before = tree();
  Output o = run("run --cases 300 --jobs 1 --out o");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("o/finding-1-spurious_reject.json: refusing to replace a FIFO"), std::string::npos) << o.err;

  write("in/case.json", kSmallCase);
  write("reject.py", adapter("{'error': 'no'}"));
  fs::create_directories(work_ / "s");
  ASSERT_EQ(mkfifo((work_ / "s/case.min.json").c_str(), 0644), 0);
  o = run("shrink in/case.json --impl 'external:python3 reject.py' --out s --max-seconds 20");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("s/case.min.json: refusing to replace a FIFO"), std::string::npos) << o.err;

  fs::create_directories(work_ / "b");
  ASSERT_EQ(mkfifo((work_ / "b/case.bin").c_str(), 0644), 0);
  o = run("seed --to-binary --out b in/case.json");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("b/case.bin: refusing to replace a FIFO"), std::string::npos) << o.err;
  EXPECT_EQ(new_outside(before, tree(), {"o", "s", "b", "in", "reject.py"}), std::set<std::string>{});
}

// 6. replay DIR reports every *.json entry it cannot replay and runs the others.
TEST_F(SecondPass, Item6ReplayReportsLoopsDanglingLinksFifosAndFolders) {
  write("cases/good.json", kSmallCase);
  fs::create_symlink("loop.json", work_ / "cases/loop.json");
  fs::create_symlink("missing", work_ / "cases/dangling.json");
  ASSERT_EQ(mkfifo((work_ / "cases/fifo.json").c_str(), 0644), 0);
  fs::create_directories(work_ / "cases/folder.json");
  const Output o = run("replay cases");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;  // was 3 (the loop), 0 for the others
  EXPECT_NE(o.out.find("cases/good.json: vllm-50874: pass"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("cases/loop.json: cannot be replayed: a symbolic link loop"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("cases/dangling.json: cannot be replayed: a dangling symbolic link"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("cases/fifo.json: cannot be replayed: not a regular file (a FIFO)"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("cases/folder.json: cannot be replayed: is a directory"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("4 could not be replayed"), std::string::npos) << o.out;
}

// 7. Two inputs with one output name are an error, nothing converted.
TEST_F(SecondPass, Item7SeedToBinaryRefusesTwoInputsWithOneOutputName) {
  write("dupst/a/x.json", kSmallCase);
  write("dupst/b/x.json", kSmallCase);
  const Output o = run("seed --to-binary --out bin dupst");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz seed: dupst/b/x.json and dupst/a/x.json would both be written as x.bin (nothing was "
                   "converted: rename one, or convert them into different --out folders)\n");
  EXPECT_FALSE(fs::exists(work_ / "bin/x.bin"));
  EXPECT_EQ(tree(), (std::set<std::string>{"dupst", "dupst/a", "dupst/a/x.json", "dupst/b", "dupst/b/x.json", "bin"}));
}

// 8. mutants --markdown /dev/full: an error, exit 2.
TEST_F(SecondPass, Item8MutantsMarkdownToDevFullIsAnError) {
  const Output o = run("mutants --fault no-trim --carrier r3-fixed --seeds 1 --max-cases 200 --no-shrink "
                       "--markdown /dev/full");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz mutants: --markdown /dev/full: refusing to replace a character device (r3fuzz writes "
                   "only regular files, each one new)\n");
}

// 9. A note over the binary format's limit is refused by the JSON reader, with the limit.
TEST_F(SecondPass, Item9ANoteOverOneMebibyteIsRefusedWithTheLimit) {
  std::string c = kSmallCase;
  c.insert(c.rfind('}'), ", \"note\": \"" + std::string((1 << 20) + 1, 'n') + "\"");
  write("big.json", c);
  const Output o = run("seed --to-binary --out bin big.json");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.err, "r3fuzz seed: big.json: note: 1048577 bytes, at most 1048576 (1 MiB, the binary case format's "
                   "limit)\n");
  std::string fits = kSmallCase;
  fits.insert(fits.rfind('}'), ", \"note\": \"" + std::string(1 << 20, 'n') + "\"");
  write("fits.json", fits);
  ASSERT_EQ(run("seed --to-binary --out bin fits.json").exit_code, 0);
  const Output back = run("seed --to-json --out back bin/fits.bin");
  EXPECT_EQ(back.exit_code, 0) << back.err;
}

const std::string kDeployment = R"({"format": "r3fuzz-deployment/1", "name": "qwen", "note": "NOTE",
 "topology": {"dp": 2, "tp": 4, "ep": true, "sp": false}, "model": {"layers": 94, "top_k": 8, "experts": 128},
 "max_num_tokens": 512, "path": "gathered", "monolithic": true,
 "traffic": {"decode_batches": [1, 256], "prefill_lengths": [512]}})";

std::string deployment_with_note(const std::string& note) {
  std::string d = kDeployment;
  return d.replace(d.find("NOTE"), 4, note);
}

// 10. seed's memory does not grow with note times cases.
TEST_F(SecondPass, Item10SeedWithAHugeNoteOrALongLogStaysInMemory) {
  write("big-note.json", deployment_with_note(std::string(20 << 20, 'n')));
  Output o = run_capped("seed --deployment big-note.json --out s1");
  EXPECT_EQ(o.exit_code, 2) << o.err;  // was 3: bad_alloc
  EXPECT_NE(o.err.find("note: 20971520 bytes, at most 1048512 (a case's note is at most 1 MiB)"), std::string::npos)
      << o.err;

  write("note.json", deployment_with_note(std::string(4096, 'n')));
  std::string log;
  const std::string line = R"({"step": 1, "num_tokens_across_dp": [3, 2], "local_sizes": [3, 2]})" "\n";
  while (log.size() < (8u << 20)) log += line;
  write("log.jsonl", log);
  o = run_capped("seed --deployment note.json --log log.jsonl --out s2");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("r3fuzz seed: wrote "), std::string::npos) << o.out;
  for (const auto& e : fs::directory_iterator(work_ / "s2"))
    EXPECT_NE(r3::test::read_file_bytes(e.path()).find(std::string(4096, 'n')), std::string::npos) << e.path();
}

// 11. explain --json on a case whose JSON would take ~11 GB: refused with the size.
TEST_F(SecondPass, Item11ExplainJsonRefusesAnExplanationOverItsBound) {
  write("huge.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 1024, "tp": 64, "ep": true, "sp": true},
 "model": {"layers": 2, "top_k": 1, "experts": 8}, "max_num_tokens": 16777216, "tokens": [)" +
                         [] {
                           std::string t;
                           for (int i = 0; i < 1024; ++i) t += (i ? ", " : "") + std::to_string(16777216);
                           return t;
                         }() +
                         R"(], "padding": "none", "path": "sp_shard", "layer": 0, "dp_chunk": 4096})");
  const Output o = run_capped("explain huge.json --json");
  EXPECT_EQ(o.exit_code, 2) << o.err.substr(0, 2000);  // was 134: SIGABRT
  EXPECT_NE(o.err.find("r3fuzz explain: --json: this case's explanation lists "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("at most 1048576 are written as JSON"), std::string::npos) << o.err;
}

// 12. The gpu host backend refuses a case whose buffers pass its bound, naming the bound.
TEST_F(SecondPass, Item12TheGpuHostBackendRefusesBuffersOverItsBound) {
#ifndef R3FUZZ_HAVE_GPU
  GTEST_SKIP() << "the gpu implementations are not built";
#endif
  write("gpu.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 8, "tp": 8, "ep": true, "sp": false},
 "model": {"layers": 256, "top_k": 64, "experts": 64}, "max_num_tokens": 64, "tokens": [64, 64, 64, 64, 64, 64, 64, 64],
 "padding": {"cudagraph": [32760]}, "path": "gathered", "monolithic": true, "layer": 0})");
  const Output o = run_capped("replay gpu.json --impl gpu --mode concrete");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;  // was 3: bad_alloc; now an adapter_error finding
  EXPECT_NE(o.out.find("more than the 268435456 bytes (256 MiB) one case may take; refused before allocating"),
            std::string::npos)
      << o.out;
}

// 13. A deeply nested 60 MB reply costs nothing like 2.4 GB: refused at depth 64.
TEST_F(SecondPass, Item13ADeeplyNestedReplyIsRefusedAtItsDepth) {
  // The reply line is written as text: Python's own json could not build such a document.
  write("nest.py",
        "import json, sys\nNEST = '[' * 30000000 + ']' * 30000000\nfor line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    if req.get('type') == 'hello':\n"
        "        print(json.dumps({'type': 'hello', 'protocol': 'r3fuzz-adapter/1', 'name': 't'}), flush=True)\n"
        "    else:\n"
        "        sys.stdout.write('{\"id\": %d, \"rows\": %s}\\n' % (req['id'], NEST)); sys.stdout.flush()\n");
  const Output o = run_capped("run --impl 'external:python3 nest.py' --cases 4 --jobs 2 --no-shrink --out o");
  EXPECT_EQ(o.exit_code, 1) << o.out.substr(0, 2000) << o.err.substr(0, 2000);  // was 134, no summary
  EXPECT_NE(o.out.find("nested deeper than 64 levels at line 1, column"), std::string::npos) << o.out.substr(0, 4000);
  EXPECT_NE(o.out.find("result: "), std::string::npos);
}

// 14. 50 MB error texts are stored cut, their length stated.
TEST_F(SecondPass, Item14HugeAdapterErrorTextsAreStoredCut) {
  // Six replies of 50 MB errors (the issue's), then short ones.
  write("err.py", adapter("(N.append(1), {'error': 'E' * 50000000 if len(N) <= 6 else 'short'})[1]", "N = []\n"));
  const auto before = tree();
  const Output o = run_capped("run --impl 'external:python3 err.py' --cases 6 --jobs 1 --no-shrink --out o");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_LT(o.out.size(), 200000u);
  EXPECT_NE(o.out.find("... (50000000 bytes in all)"), std::string::npos) << o.out.substr(0, 3000);
  for (const auto& e : fs::directory_iterator(work_ / "o")) EXPECT_LT(fs::file_size(e.path()), 64000u) << e.path();
  EXPECT_EQ(new_outside(before, tree(), {"o"}), std::set<std::string>{});
}

// 15. A grandchild that calls setsid() is killed and reaped with its adapter.
TEST_F(SecondPass, Item15ASetsidGrandchildDiesWithItsAdapter) {
  write("escape.py", adapter("{'rows': []}",
                             "import subprocess\n"
                             "p = subprocess.Popen(['setsid', 'sleep', '1000'])\n"
                             "open('grandchild.pid', 'w').write(str(p.pid))\n"));
  const Output o = run("run --impl 'external:python3 escape.py' --cases 2 --jobs 1 --no-shrink --out o");
  EXPECT_NE(o.exit_code, 2) << o.err;
  const std::string pid_text = r3::test::read_file_bytes(work_ / "grandchild.pid");
  ASSERT_FALSE(pid_text.empty()) << o.err;
  const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  const bool alive = ::kill(pid, 0) == 0;
  if (alive) ::kill(pid, SIGKILL);  // leave nothing behind, whatever the verdict
  EXPECT_FALSE(alive) << "the setsid() grandchild " << pid << " outlived r3fuzz";
}

// 15, on the signal path: SIGTERM ends `shrink` (which has no clean stop) at once; the
// grandchild that left the group goes too.
TEST_F(SecondPass, Item15ASetsidGrandchildDiesWhenASignalEndsR3fuzz) {
  write("escape.py", adapter("(__import__('time').sleep(1), {'rows': []})[1]",
                             "import subprocess\n"
                             "p = subprocess.Popen(['setsid', 'sleep', '1000'])\n"
                             "open('grandchild.pid', 'w').write(str(p.pid))\n"));
  write("in/case.json", kSmallCase);
  const Output o = run_shell("'" + binary() + "' shrink in/case.json --impl 'external:python3 escape.py' --out out & "
                             "pid=$!; sleep 1.5; kill -TERM $pid; wait $pid; echo rc=$? >&2");
  EXPECT_NE(o.err.find("rc=143"), std::string::npos) << o.err;  // ended by SIGTERM, as before
  const std::string pid_text = r3::test::read_file_bytes(work_ / "grandchild.pid");
  ASSERT_FALSE(pid_text.empty()) << o.err;
  const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  const bool alive = ::kill(pid, 0) == 0;
  if (alive) ::kill(pid, SIGKILL);
  EXPECT_FALSE(alive) << "the setsid() grandchild " << pid << " outlived r3fuzz";
}

// The minor list.
TEST_F(SecondPass, MinorShrinkBlamesTheFileForABadExpectImpl) {
  std::string c = kSmallCase;
  c.insert(c.rfind('}'), R"(, "expect": {"impl": "bogus", "verdict": "pass", "severity": ""})");
  write("case.json", c);
  const Output o = run("shrink case.json --out out");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(o.err.starts_with("r3fuzz shrink: case.json: expect.impl bogus: ")) << o.err;
}

TEST_F(SecondPass, MinorAClosedStdoutPipeIsExitTwo) {
  // `true` has long exited when r3fuzz prints its report: the write meets a closed pipe.
  const Output o = run_shell("('" + binary() + "' run --cases 300 --jobs 1 --no-shrink --out o; echo rc=$? >&2) | true");
  EXPECT_NE(o.err.find("rc=2"), std::string::npos) << o.err;  // was 141: SIGPIPE
  EXPECT_NE(o.err.find("r3fuzz: cannot write to standard output: "), std::string::npos) << o.err;
}

TEST_F(SecondPass, MinorU64ValuesInALogAreQuotedAsWritten) {
  write("d.json", deployment_with_note("n"));
  write("log.jsonl", R"({"num_tokens_across_dp": [18446744073709551615, 1]})" "\n");
  const Output o = run("seed --deployment d.json --log log.jsonl --out s");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("num_tokens_across_dp[0]: 18446744073709551615 is out of range"), std::string::npos) << o.err;
}

TEST_F(SecondPass, MinorMutantsSeedsDoNotWrapAndTheLabelsAreTrue) {
  Output o = run("mutants --first-seed 18446744073709551615 --seeds 2 --fault no-trim --carrier r3-fixed");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--first-seed: 18446744073709551615 with --seeds 2 would wrap"), std::string::npos) << o.err;
  o = run("mutants --fault no-trim --carrier r3-fixed --seeds 1 --max-cases 200 --no-shrink --profile any");
  EXPECT_EQ(o.out.find("profile vllm"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("profile any"), std::string::npos) << o.out;
#ifndef R3FUZZ_HAVE_GPU
  GTEST_SKIP() << "gpu+no-trim needs the gpu implementations";
#endif
  o = run("mutants --fault no-trim --carrier gpu+no-trim --seeds 1 --max-cases 50 --no-shrink");
  EXPECT_EQ(o.out.find("kill rate 100.0%"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("kill rate n/a (no non-equivalent mutant was measured)"), std::string::npos) << o.out;
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz mutants: no mutant could be measured: every carrier and fault asked for is unavailable "
                   "(listed above)\n");
}

TEST_F(SecondPass, MinorShrinkMaxSecondsHoldsWithASlowAdapter) {
  write("slow.py", adapter("(__import__('time').sleep(2), {'error': 'slow'})[1]"));
  write("in/case.json", kSmallCase);
  const auto start = std::chrono::steady_clock::now();
  const Output o = run("shrink in/case.json --impl 'external:python3 slow.py' --out out --max-seconds 3");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 6.0) << o.out << o.err;  // was 13.6 s
}

}  // namespace
