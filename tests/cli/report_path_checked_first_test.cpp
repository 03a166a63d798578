// End-to-end tests that a report file given on the command line (`run --junit`, `replay --junit`,
// `mutants --markdown`) is checked before the first case (docs/SECURITY.md, "What `expect` means
// under `--impl`", last part): a missing folder, or a folder given as the file, is exit 2 naming
// the flag and the path at once, not after the campaign whose report it would have held.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using Output = r3::test::BinaryRun;

const fs::path kMicrobatch =
    fs::path(R3FUZZ_SOURCE_DIR) / "corpus" / "regression" / "vllm-50874-wrong-rows-microbatch-overwrite.json";

class ReportPathCheckedFirst : public r3::test::WorkDirFixture {
 protected:
  ReportPathCheckedFirst() : WorkDirFixture("r3fuzz-report-path") {}
};

TEST_F(ReportPathCheckedFirst, RunRefusesABadJunitPathBeforeTheFirstCase) {
  Output o = run("run --cases 300 --jobs 1 --out o --junit missing/run.xml");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz run: --junit missing/run.xml: no such folder: missing\n");
  EXPECT_EQ(o.out, "");                   // was the whole campaign's report
  EXPECT_FALSE(fs::exists(work_ / "o"));  // was the campaign's findings
  fs::create_directories(work_ / "reports");
  o = run("run --cases 300 --jobs 1 --out o --junit reports");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz run: --junit reports: is a directory, not a file\n");
  EXPECT_EQ(o.out, "");
  EXPECT_FALSE(fs::exists(work_ / "o"));
}

TEST_F(ReportPathCheckedFirst, ReplayRefusesABadJunitPathBeforeTheFirstFile) {
  write("case.json", r3::test::read_file_bytes(kMicrobatch));
  Output o = run("replay case.json --junit missing/r.xml");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz replay: --junit missing/r.xml: no such folder: missing\n");
  EXPECT_EQ(o.out, "");  // was every file's verdict, then the error
  fs::create_directories(work_ / "reports");
  o = run("replay case.json --junit reports");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz replay: --junit reports: is a directory, not a file\n");
  EXPECT_EQ(o.out, "");
  write("file", "");
  o = run("replay case.json --junit file/r.xml");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz replay: --junit file/r.xml: file is not a directory\n");
  // A good path is still written.
  o = run("replay case.json --junit reports/r.xml");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_TRUE(fs::is_regular_file(work_ / "reports/r.xml"));
}

TEST_F(ReportPathCheckedFirst, MutantsRefusesABadMarkdownPathBeforeMeasuring) {
  const Output o = run("mutants --carrier r3-fixed --fault no-trim --seeds 1 --max-cases 50 --markdown missing/m.md");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz mutants: --markdown missing/m.md: no such folder: missing\n");
  EXPECT_EQ(o.out, "");  // was the matrix, measured, then the error
}

}  // namespace
