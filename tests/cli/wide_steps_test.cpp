// The widest steps the case format allows (dp 1024, tp 64 or dp 512, tp 64), from files of a few
// KB: `explain --json` refuses what it cannot list, counting the runs each rank entry lists,
// and `export --pytest` takes time in proportion to the ranks, refusing a module over its entry
// bound (docs/SECURITY.md, memory budgets). Under `ulimit -v 4000000`, as the memory budgets
// are checked, and under `timeout` as a hang guard: the exports take well under a second here
// and took minutes before (speed itself is measured by bench/, never by a timed test).
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/memory_cap.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

using Output = r3::test::BinaryRun;


class WideSteps : public r3::test::WorkDirFixture {
 protected:
  WideSteps() : WorkDirFixture("r3fuzz-wide-steps") {}

  // r3fuzz under a 4 GB cap on virtual memory (not under AddressSanitizer, whose shadow reserves
  // terabytes) and a 120 s hang guard (timeout exits 124): the exports below took more than five
  // minutes before they were made linear, and take under a second now.
  Output run_capped(const std::string& args) {
    const std::string cap = r3::test::memory_cap_prefix();
    const std::string cmd = "cd '" + work_.string() + "' && sh -c '" + cap + "exec timeout 120 " + R3FUZZ_BINARY + " " +
                            args + "' >'" + (dir_ / "stdout").string() + "' 2>'" + (dir_ / "stderr").string() + "'";
    return r3::test::captured_run(r3::test::exit_code_of_wait_status(std::system(cmd.c_str())), dir_);
  }
};

// "requests": [1, 0, 1, 0, ...]: one request on every other DP rank.
std::string every_other(int dp) {
  std::string out;
  for (int d = 0; d < dp; ++d) out += std::string(d ? ", " : "") + (d % 2 == 0 ? "1" : "0");
  return out;
}

// An SGLang decode forward with DP attention over `dp` ranks of attn-TP `tp`.
std::string sglang_decode(int dp, int tp, int top_k, int cps, int mrr) {
  return R"({"format": "r3fuzz-case/1", "engine": "sglang",
 "topology": {"dp": )" + std::to_string(dp) + R"(, "tp": )" + std::to_string(tp) + R"(, "dp_attention": true, "a2a": "none"},
 "model": {"layers": 4, "top_k": )" + std::to_string(top_k) + R"(, "experts": 256}, "forward": "decode",
 "requests": [)" + every_other(dp) + R"(], "tbo": false, "chunked_prefill_size": )" + std::to_string(cps) +
         R"(, "max_running_requests": )" + std::to_string(mrr) + R"(, "layer": 1})";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// dp 512, tp 64, one request on every other rank: each of the 32768 rank entries lists the
// gathered tensor's 512 runs, 16.7 million in all. It aborted with std::bad_alloc under the cap
// (the bound counted rank entries only); now it is refused with the count, before any is built.
TEST_F(WideSteps, ExplainJsonCountsTheRunsEachRankEntryLists) {
  write("wide.json", sglang_decode(512, 64, 8, 1024, 8));
  const Output o = run_capped("explain wide.json --json");
  EXPECT_EQ(o.exit_code, 2) << o.err.substr(0, 2000);  // was 134: SIGABRT (std::bad_alloc)
  EXPECT_EQ(o.err,
            "r3fuzz explain: --json: this case's explanation lists 16941056 rank entries and runs (32768 ranks, 1 "
            "calls, 3 policies; 16777216 runs of rows written); at most 1048576 are written as JSON. The text output "
            "(without --json) is bounded and shows this case\n");
  EXPECT_EQ(o.out, "");
  // The text output shows the same case, bounded.
  const Output text = run_capped("explain wide.json");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("more rows not shown (explain's text is bounded; --json lists everything)"), std::string::npos);
}

// dp 1024, tp 64: 65536 ranks, each handed the 1024-run gathered tensor. Every rank's tensor was
// compared by content (30 s at dp 256, minutes at dp 1024); now it is looked up by where its rows
// come from. The module lists the one tensor once and each rank's expected rows once.
TEST_F(WideSteps, ExportOfTheWidestSglangStepListsEachRankOnce) {
  write("wide.json", sglang_decode(1024, 64, 1, 8, 8));
  const Output o = run_capped("export wide.json --pytest --out test_wide.py");
  ASSERT_EQ(o.exit_code, 0) << o.err;  // was 124: still running after 120 s
  EXPECT_EQ(o.out, "wrote test_wide.py; run it: pytest test_wide.py\n");
  const std::string module = r3::test::read_file_bytes(work_ / "test_wide.py");
  EXPECT_NE(module.find("\nDP, TP, LAYERS, TOP_K, LAYER = 1024, 64, 4, 1, 1\n"), std::string::npos);
  const size_t tensors = module.find("\nTENSORS = [\n"), calls = module.find("\nCALLS = [\n");
  ASSERT_NE(tensors, std::string::npos);
  ASSERT_NE(calls, std::string::npos);
  EXPECT_EQ(count(module.substr(tensors, calls - tensors), "\n    ["), 2u);  // the gathered tensor and the all-gather
  EXPECT_EQ(count(module, "\n    ("), 65536u);  // one EXPECTED line per rank (dp, tp)
  EXPECT_NE(module.find("\n    (1022, 63): [(0, \"token\", 1022, 0, 1)],\n    (1023, 0): [],\n"), std::string::npos);
  EXPECT_LT(module.size(), size_t{8} << 20);
}

// The same width on vLLM's gathered path: every rank receives the whole gathered batch.
TEST_F(WideSteps, ExportOfTheWidestVllmGatheredStepFinishes) {
  write("wide.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 1024, "tp": 64, "ep": true, "sp": false},
 "model": {"layers": 2, "top_k": 1, "experts": 8}, "max_num_tokens": 8, "tokens": [)" + every_other(1024) +
                         R"(], "padding": "none", "path": "gathered", "layer": 0})");
  const Output o = run_capped("export wide.json --pytest --out test_wide.py");
  ASSERT_EQ(o.exit_code, 0) << o.err;  // was 124: still running after 120 s
  const std::string module = r3::test::read_file_bytes(work_ / "test_wide.py");
  EXPECT_EQ(count(module, "\n    ("), 65536u);  // one EXPECTED line per rank
  EXPECT_NE(module.find("\n    (1022, 63): [(0, \"token\", 1022, 0, 1)],\n"), std::string::npos);
  EXPECT_LT(module.size(), size_t{8} << 20);
}

// 64 DP chunks of 65536 ranks: each rank's tensor per chunk alone is 8 million entries (a module of
// gigabytes; it ran out of memory under the cap). Refused before the lists are built, naming the bound.
TEST_F(WideSteps, ExportRefusesAModuleOverItsEntryBound) {
  std::string tokens;
  for (int d = 0; d < 1024; ++d) tokens += std::string(d ? ", " : "") + "262144";
  write("chunked.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 1024, "tp": 64, "ep": true, "sp": true},
 "model": {"layers": 2, "top_k": 1, "experts": 8}, "max_num_tokens": 262144, "tokens": [)" + tokens +
                            R"(], "padding": "none", "path": "sp_shard", "layer": 0, "dp_chunk": 64})");
  const Output o = run_capped("export chunked.json --pytest --out test_chunked.py");
  EXPECT_EQ(o.exit_code, 2) << o.err;  // was 3: std::bad_alloc
  EXPECT_EQ(o.err,
            "r3fuzz export: the step is too large to export: its module would list more than 4194304 entries, the "
            "most one module lists (each rank's tensor per capture call, 64 calls of 65536 ranks; the runs of rows of "
            "every distinct tensor and of the rows each rank must hold)\n");
  EXPECT_FALSE(std::filesystem::exists(work_ / "test_chunked.py"));
}

}  // namespace
