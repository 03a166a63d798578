// End-to-end: `run --jobs N` for every N in range, 1024 included, under a cap on address space
// (`ulimit -v 4000000`, which holds some 500 thread stacks of 8 MiB) and a `timeout`. The campaign
// runs on the worker threads the system starts, with the report of --jobs 1, and says so; what
// each worker needs (its implementations, an external adapter's process) is made only for the
// workers that started, and a worker whose adapter the system cannot start is an error naming
// --jobs (docs/SECURITY.md, "Worker threads and processes").
#include <string>

#include <gtest/gtest.h>

#include "tests/support/memory_cap.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

using Output = r3::test::BinaryRun;


class CampaignWithMostJobs : public r3::test::WorkDirFixture {
 protected:
  CampaignWithMostJobs() : WorkDirFixture("r3fuzz-campaign-most-jobs") {}

  // r3fuzz `args` after `limits` (shell ulimit commands), with `seconds` of wall time (exit 124).
  Output run_limited(const std::string& limits, const std::string& args, int seconds) {
    const std::string cmd = "cd '" + work_.string() + "' && " + limits + "timeout " + std::to_string(seconds) + " '" +
                            R3FUZZ_BINARY + "' " + args + " >'" + (dir_ / "stdout").string() + "' 2>'" +
                            (dir_ / "stderr").string() + "'";
    return r3::test::captured_run(r3::test::exit_code_of_wait_status(std::system(cmd.c_str())), dir_);
  }
  // Under the 4 GB cap (AddressSanitizer reserves terabytes of address space for its shadow, so
  // the sanitized build runs without it).
  Output run_capped(const std::string& args, int seconds) {
    return run_limited(r3::test::memory_cap_prefix(), args, seconds);
  }
};

// --jobs 1024 is in range, but the cap holds about 500 stacks: creating the rest threw
// std::system_error ("Resource temporarily unavailable"), exit 3. The started workers now judge
// every case, and the report is byte-identical to --jobs 1's.
TEST_F(CampaignWithMostJobs, RunsOnTheThreadsTheSystemStartsWithTheReportOfOneJob) {
  const std::string args = "run --cases 2000 --impl r3-fixed --json --out o --jobs ";
  const Output one = run_capped(args + "1", 300);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_NE(one.out.find("\"cases\": 2000"), std::string::npos) << one.out.substr(0, 2000);
  const Output most = run_capped(args + "1024", 300);
  EXPECT_EQ(most.exit_code, 0) << most.err;
  EXPECT_EQ(most.out, one.out);
  if (!most.err.empty()) {  // a machine whose stacks all fit under the cap starts all 1024
    EXPECT_EQ(most.err.rfind("r3fuzz run: --jobs 1024: the system started only ", 0), 0u) << most.err;
    EXPECT_NE(most.err.find(" worker thread(s) ("), std::string::npos) << most.err;
    EXPECT_NE(most.err.find("); they judged every case, with the same report\n"), std::string::npos) << most.err;
  }
}

// With an external adapter each worker runs one process of its own, two pipes each. Where the
// system has no descriptors left for a worker's (`ulimit -n 64`), the run ends before any case
// with an error that names --jobs and the worker, not only the pipe that failed.
TEST_F(CampaignWithMostJobs, AWorkerWhoseAdapterTheSystemCannotStartIsAnErrorNamingJobs) {
  write("hello.sh",
        "read line\n"
        "echo '{\"type\": \"hello\", \"protocol\": \"r3fuzz-adapter/1\", \"name\": \"t\", \"version\": \"1\"}'\n"
        "read line\n");
  const Output o = run_limited("ulimit -n 64 && ", "run --cases 5 --jobs 100 --impl 'external:sh hello.sh' --out o", 120);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err.rfind("r3fuzz run: --jobs 100: worker ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find(" of 100: --impl external:sh hello.sh: pipe: Too many open files (each worker has "
                       "implementations of its own, an external adapter one process each: lower --jobs)\n"),
            std::string::npos)
      << o.err;
}

}  // namespace
