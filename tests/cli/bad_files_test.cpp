// End-to-end tests of issue 15 ("Hostile and bad input"), the bad-file items: special and huge
// files (7), explain's bounded text (8), duplicate keys and NUL bytes (12), one binary decoding
// (13), input errors that were internal errors (14) and the smaller ones of 17 in this part.
// The real binary, the issue's inputs, exit code 2 and the exact message naming file and reason.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Output = r3::test::BinaryRun;

class BadFiles : public r3::test::WorkDirFixture {
 protected:
  BadFiles() : WorkDirFixture("r3fuzz-bad-files") {}
};

const std::string kDeployment = R"({"format": "r3fuzz-deployment/1", "name": "d",
 "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false}, "model": {"layers": 4, "top_k": 2, "experts": 64},
 "max_num_tokens": 16, "path": "gathered", "traffic": {"prefill_lengths": [4]}})";

const std::string kCase = R"({"format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false},
 "model": {"layers": 8, "top_k": 1, "experts": 8}, "max_num_tokens": 4, "tokens": [1], "padding": "none",
 "path": "single", "layer": 0})";

// Every command that reads a file, with FILE where the hostile path goes.
const std::vector<std::string> kReaders = {"explain FILE", "replay FILE", "shrink --from-bytes FILE --impl vllm-50874",
                                           "seed --to-binary --out o FILE", "seed --to-json --out o FILE",
                                           "seed --deployment FILE --out o", "seed --deployment d.json --log FILE --out o"};

std::string with_file(std::string command, const std::string& file) { return command.replace(command.find("FILE"), 4, file); }

// The prefix the message carries for `command`: seed names the flag it read the file for.
std::string prefix_for(const std::string& command) {
  if (command.find("--log") != std::string::npos) return "--log ";
  if (command.find("--deployment FILE") != std::string::npos) return "--deployment ";
  return "";
}

std::string command_name(const std::string& command) { return command.substr(0, command.find(' ')); }


TEST_F(BadFiles, Item7SpecialAndHugeFilesAreRefusedNamingFileAndReason) {
  write("d.json", kDeployment);
  ASSERT_EQ(mkfifo((work_ / "fifo").c_str(), 0600), 0);
  fs::create_directories(work_ / "dir.json");
  {  // 2 GB, sparse: costs no disk
    std::ofstream big(work_ / "big.json", std::ios::binary);
    big.seekp((int64_t{2} << 30) - 1);
    big.put('}');
  }
  struct Bad {
    std::string file;
    std::string reason;
  };
  const std::vector<Bad> bad = {
      {"/dev/zero", "not a regular file (a character device)"},
      {"/dev/urandom", "not a regular file (a character device)"},
      {"fifo", "not a regular file (a FIFO)"},
      {"dir.json", "is a directory"},
      {"big.json", "too large: 2147483648 bytes (the limit is 64 MiB)"},
      {"missing.json", "cannot open: No such file or directory"},
  };
  for (const std::string& command : kReaders) {
    for (const Bad& b : bad) {
      if (command.starts_with("replay") && b.file == "dir.json") continue;  // replay reads directories of cases
      if (command.starts_with("seed --to") && b.file == "dir.json") continue;  // so do the converters
      if (command.starts_with("replay") && b.file == "missing.json") continue;  // replay's own words (item 10)
      const Output o = run(with_file(command, b.file));
      EXPECT_EQ(o.exit_code, 2) << command << " " << b.file << "\n" << o.out << o.err;
      // replay names each bad file, replays the rest, then says how many it could not (item 10).
      const std::string summary = command.starts_with("replay")
                                      ? "r3fuzz replay: 1 file or path could not be replayed (listed above)\n"
                                      : "";
      EXPECT_EQ(o.err,
                "r3fuzz " + command_name(command) + ": " + prefix_for(command) + b.file + ": " + b.reason + "\n" + summary)
          << command << " " << b.file;
    }
  }
}

TEST_F(BadFiles, Item7PermissionDenied) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: permissions do not apply";
  write("locked.json", kCase);
  fs::permissions(work_ / "locked.json", fs::perms::none);
  const Output o = run("explain locked.json");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz explain: locked.json: cannot open: Permission denied\n");
}

TEST_F(BadFiles, Item8ExplainTextIsBounded) {
  // 64 x 8 ranks and 512 DP chunks: printed in full, hundreds of thousands of lines.
  std::string tokens = "[";
  for (int d = 0; d < 64; ++d) tokens += (d ? ", " : "") + std::to_string(d % 2 ? 512 : 37);
  tokens += "]";
  write("large.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 64, "tp": 8, "ep": true, "sp": false},
 "model": {"layers": 4, "top_k": 2, "experts": 64}, "max_num_tokens": 512, "tokens": )" + tokens + R"(,
 "padding": "none", "path": "local", "layer": 0, "dp_chunk": 1})");
  const Output o = run("explain large.json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_LT(o.out.size(), 200000u);
  EXPECT_NE(o.out.find("... calls 9 to 511 not shown (explain's text is bounded; --json lists everything)"),
            std::string::npos);
  EXPECT_NE(o.out.find("more rows not shown (explain's text is bounded; --json lists everything)"), std::string::npos);
  EXPECT_NE(o.out.find("call 512 of 512"), std::string::npos);
}

TEST_F(BadFiles, Item12DuplicateKeysAndNulBytesAreRefused) {
  write("dup.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false}, "model": {"layers": 8, "top_k": 1, "experts": 8}, "max_num_tokens": 4, "tokens": [1], "padding": "none", "path": "single", "layer": 5, "layer": 0})");
  Output o = run("explain dup.json");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz explain: dup.json: duplicate key \"layer\" at line 1, column 228\n");
  o = run("replay dup.json");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err,
            "r3fuzz replay: dup.json: duplicate key \"layer\" at line 1, column 228\n"
            "r3fuzz replay: 1 file or path could not be replayed (listed above)\n");

  write("nul.json", kCase + std::string(1, '\0'));
  o = run("explain nul.json");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz explain: nul.json: NUL byte at line 3, column 31\n");

  std::string dup_deployment = kDeployment;
  dup_deployment.replace(dup_deployment.find("\"name\": \"d\""), 11, "\"name\": \"d\", \"name\": \"e\"");
  write("dupdep.json", dup_deployment);
  o = run("seed --deployment dupdep.json --out o");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz seed: --deployment dupdep.json: duplicate key \"name\" at line 1, column 53\n");

  write("d.json", kDeployment);
  write("log.jsonl", "{\"num_tokens_across_dp\": [1, 2], \"num_tokens_across_dp\": [2, 2]}\n{\"num_tokens_across_dp\": [1, 1]}" +
                         std::string(1, '\0') + "\n");
  o = run("seed --deployment d.json --log log.jsonl --out o");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err,
            "r3fuzz seed: 2 step(s) not seeded:\n"
            "  log.jsonl: line 1: duplicate key \"num_tokens_across_dp\" at line 1, column 55\n"
            "  log.jsonl: line 2: NUL byte at line 1, column 33\n");
}

// The writer spells out "monolithic": false, which corpus files may leave out: the same case.
json without_defaults(json doc) {
  if (doc.contains("monolithic") && doc["monolithic"] == false) doc.erase("monolithic");
  return doc;
}

TEST_F(BadFiles, Item12AnAdapterReplyWithADuplicateKeyIsRefused) {
  // An adapter that says hello with "type" twice, then reads forever.
  const std::string adapter =
      R"(printf '{"type": "hello", "type": "hello", "protocol": "r3fuzz-adapter/1", "name": "dup", "version": "1"}\n'; )"
      "cat >/dev/null";
  write("adapter.sh", adapter);
  const Output o = run("run --impl 'external:sh adapter.sh' --cases 5 --out o");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_EQ(o.err,
            "r3fuzz run: --impl external:sh adapter.sh: the adapter's hello: duplicate key \"type\" at line 1, column 24: "
            R"("{\"type\": \"hello\", \"type\": \"hello\", \"protocol\": \"r3fuzz-adapter/1\", \"name\": \"dup\", )"
            R"(\"version\": \"1\"}")"
            "\n");
}

TEST_F(BadFiles, Item13OneDecodingJsonBinaryJsonRoundTripsTheWholeCorpus) {
  const fs::path corpus = fs::path(R3FUZZ_SOURCE_DIR) / "corpus";
  Output o = run("seed --to-binary --out bin '" + corpus.string() + "'");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  o = run("seed --to-json --out json bin");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  size_t compared = 0;
  for (const auto& entry : fs::recursive_directory_iterator(corpus)) {
    if (entry.path().extension() != ".json") continue;
    const fs::path back = work_ / "json" / entry.path().filename();
    ASSERT_TRUE(fs::exists(back)) << back;
    EXPECT_EQ(without_defaults(json::parse(r3::test::read_file_bytes(back))),
              without_defaults(json::parse(r3::test::read_file_bytes(entry.path()))))
        << entry.path();
    ++compared;
  }
  EXPECT_GT(compared, 10u);
}

TEST_F(BadFiles, Item13ShrinkFromBytesReadsWhatSeedWrote) {
  // A note-less case with M 100 (beyond the fuzz targets' 64): shrink used to read it as M 36.
  write("m100/case.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false},
 "model": {"layers": 4, "top_k": 2, "experts": 64}, "max_num_tokens": 100, "tokens": [100, 100],
 "padding": "none", "path": "gathered", "monolithic": true, "layer": 1})");
  ASSERT_EQ(run("seed --to-binary --out bin m100").exit_code, 0);
  const Output o = run("shrink --from-bytes bin/case.bin --impl vllm-pre-50874 --out shrunk");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("  from: dp 2 tp 1 ep, M 100, tokens [100, 100]"), std::string::npos) << o.out;
  // A regression entry (with note and expect) converts and shrinks too: no "trailing bytes".
  const fs::path entry = fs::path(R3FUZZ_SOURCE_DIR) / "corpus" / "regression";
  ASSERT_EQ(run("seed --to-binary --out regbin '" + entry.string() + "'").exit_code, 0);
  for (const auto& bin : fs::directory_iterator(work_ / "regbin")) {
    const Output s = run("shrink --from-bytes '" + bin.path().string() + "' --impl vllm-50874 --max-judgements 1 --out s");
    EXPECT_EQ(s.err.find("trailing bytes"), std::string::npos) << bin.path() << s.err;
    EXPECT_EQ(s.err.find("expect.impl"), std::string::npos) << bin.path() << s.err;
  }
}

TEST_F(BadFiles, Item14InputErrorsThatWereInternalErrors) {
  write("d.json", kDeployment);
  fs::create_directories(work_ / "logdir");
  Output o = run("seed --deployment d.json --log logdir --out o");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz seed: --log logdir: is a directory\n");
  std::string long_name = kDeployment;
  long_name.replace(long_name.find("\"name\": \"d\""), 11, "\"name\": \"" + std::string(300, 'n') + "\"");
  write("long.json", long_name);
  o = run("seed --deployment long.json --out o");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err,
            "r3fuzz seed: --deployment long.json: name: 300 characters, at most 100 allowed (it names the files r3fuzz "
            "writes)\n");
}

TEST_F(BadFiles, Item17ControlCharactersInANoteAreEscaped) {
  std::string text = kCase;
  text.insert(text.size() - 1, R"(, "note": "red \u001b[31m text\u0007 and a\nnew line")");
  write("note.json", text);
  const Output o = run("explain note.json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("note: red \\x1b[31m text\\x07 and a\\nnew line\n"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find('\x1b'), std::string::npos);
}

TEST_F(BadFiles, Item17SeedRefusesTrafficBeyondMAnEmptyCudagraphAndAMissingFormat) {
  std::string beyond = kDeployment;
  beyond.replace(beyond.find("[4]"), 3, "[4, 40]");
  write("beyond.json", beyond);
  Output o = run("seed --deployment beyond.json --out o");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz seed: --deployment beyond.json: traffic.prefill_lengths[1]: 40 is outside [0, 16] "
                   "(max_num_tokens)\n");
  std::string empty = kDeployment;
  empty.insert(empty.size() - 1, R"(, "cudagraph": [])");
  write("empty.json", empty);
  o = run("seed --deployment empty.json --out o");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz seed: --deployment empty.json: cudagraph: empty; give capture sizes, or leave the key out "
                   "for no CUDA graphs\n");
  std::string no_format = kDeployment;
  no_format.erase(no_format.find("\"format\""), std::string("\"format\": \"r3fuzz-deployment/1\", ").size());
  write("noformat.json", no_format);
  o = run("seed --deployment noformat.json --out o");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "r3fuzz seed: --deployment noformat.json: format: missing (expected \"r3fuzz-deployment/1\")\n");
}

}  // namespace
