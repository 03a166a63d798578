// End-to-end: nothing an adapter replies sizes an allocation beyond what the case needs, and no
// text it replies is kept longer than 4096 bytes (docs/SECURITY.md, "Adapter replies"). The real
// binary runs real adapters (python3) under `ulimit -v 4000000` (a 4 GB cap on address space):
// replay and run, with --jobs 1 and 2, end with a verdict and the campaign's summary, never
// with std::bad_alloc (exit 3) or SIGABRT (exit 134).
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/memory_cap.hpp"
#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using Output = r3::test::BinaryRun;


class AdapterReplyBounds : public r3::test::WorkDirFixture {
 protected:
  AdapterReplyBounds() : WorkDirFixture("r3fuzz-adapter-reply-bounds") {}

  // r3fuzz (and its adapters) under a cap on virtual memory, `kilobytes` as ulimit -v takes it.
  // AddressSanitizer reserves terabytes of address space for its shadow, so the sanitized build
  // runs these without the cap: the memory bounds are checked by the default build.
  Output run_capped(const std::string& args, int64_t kilobytes = 4000000) {
    const std::string cap = r3::test::memory_cap_prefix(kilobytes);
    const std::string cmd = "cd '" + work_.string() + "' && sh -c '" + cap + "exec \"" + R3FUZZ_BINARY + "\" " +
                            escape_single(args) + "' >'" + (dir_ / "stdout").string() + "' 2>'" +
                            (dir_ / "stderr").string() + "'";
    return r3::test::captured_run(r3::test::exit_code_of_wait_status(std::system(cmd.c_str())), dir_);
  }
  static std::string escape_single(const std::string& s) {
    std::string out;
    for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out;
  }
};

// An SGLang adapter that publishes every rank's real tokens as a correct capturer does, and says
// its device buffer has `sys.argv[1]` rows; or, with a second argument N, raises an N-byte error.
const char* const kSglangAdapter = R"(import json, sys
ROWS = int(sys.argv[1])
ERROR = 'E' * int(sys.argv[2]) if len(sys.argv) > 2 else None
def value(dp, j, k):
    return (1 << 29) | (dp << 21) | (j << 6) | k
for line in sys.stdin:
    req = json.loads(line)
    if req.get('type') == 'hello':
        print(json.dumps({'type': 'hello', 'protocol': 'r3fuzz-adapter/1', 'name': 'sglang', 'engines': ['sglang']}),
              flush=True)
        continue
    reply = {'id': req['id'], 'buffer_rows': ROWS}
    if ERROR:
        reply['error'] = ERROR
    else:
        dp = req['rank']['dp']
        reply['rows'] = [[value(dp, j, k) for k in range(req['top_k'])] for j in range(req['forward_batch']['real_tokens'])]
    print(json.dumps(reply), flush=True)
)";

// Two ranks (DP attention over 2), an extend of [3, 2] tokens.
const char* const kSglangCase =
    R"({"format": "r3fuzz-case/1", "engine": "sglang", "topology": {"dp": 2, "tp": 1, "dp_attention": true,)"
    R"( "a2a": "none"}, "model": {"layers": 2, "top_k": 2, "experts": 16}, "forward": "extend", "tokens": [3, 2],)"
    R"( "tbo": false, "chunked_prefill_size": 16, "max_running_requests": 4, "layer": 0, "profile": "sglang"})";

constexpr const char* kRows2To40 = "1099511627776";
constexpr const char* kRows2To28 = "268435456";

TEST_F(AdapterReplyBounds, AHugeSglangBufferIsJudgedWithoutAllocatingIt) {
  write("sglang.py", kSglangAdapter);
  write("case.json", kSglangCase);
  // 2^40 rows: was std::bad_alloc, exit 3. A larger buffer than the case needs is legitimate.
  Output o = run_capped(std::string("replay case.json --impl 'external:python3 sglang.py ") + kRows2To40 + "'");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("case.json: external:python3 sglang.py 1099511627776: pass"), std::string::npos) << o.out;
  // 2^28 rows took 3.15 GB for these two ranks: now it fits under a 1 GB cap.
  o = run_capped(std::string("replay case.json --impl 'external:python3 sglang.py ") + kRows2To28 + "'", 1000000);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find(": pass"), std::string::npos) << o.out;
  // Too small a buffer is still a capacity failure, with the rows the adapter said.
  o = run_capped("replay case.json --impl 'external:python3 sglang.py 2'");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("capacity"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("capture buffer has 2 rows"), std::string::npos) << o.out;
}

TEST_F(AdapterReplyBounds, ACampaignAgainstAHugeSglangBufferKeepsItsReport) {
  write("sglang.py", kSglangAdapter);
  for (const char* jobs : {"1", "2"}) {
    // Was exit 3 (--jobs 1) and SIGABRT (--jobs 2), the campaign lost.
    const Output o = run_capped(std::string("run --profile sglang --impl 'external:python3 sglang.py ") + kRows2To40 +
                                "' --cases 40 --jobs " + jobs + " --no-shrink --out o" + jobs);
    EXPECT_EQ(o.exit_code, 0) << "--jobs " << jobs << ": " << o.out << o.err;
    EXPECT_NE(o.out.find("result: "), std::string::npos) << "--jobs " << jobs << ": " << o.out;
    EXPECT_EQ(o.out.find("adapter_error"), std::string::npos) << "--jobs " << jobs << ": " << o.out;
  }
}

TEST_F(AdapterReplyBounds, AnSglangReplyPublishingMoreRowsThanItsKvSlotsIsAnAdapterError) {
  // 2^40 rows of buffer, and 5 stale rows from every rank, where dp 0 has 3 KV slots.
  write("slots.py", R"(import json, sys
for line in sys.stdin:
    req = json.loads(line)
    if req.get('type') == 'hello':
        print(json.dumps({'type': 'hello', 'protocol': 'r3fuzz-adapter/1', 'name': 's', 'engines': ['sglang']}), flush=True)
        continue
    print(json.dumps({'id': req['id'], 'buffer_rows': 16, 'rows': [[-1, -1]] * 5}), flush=True)
)");
  write("case.json", kSglangCase);
  const Output o = run_capped("replay case.json --impl 'external:python3 slots.py'");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("adapter_error"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("dp 0 tp 0: rows: 5 published rows, more than the rank's 3 KV slots "
                       "(forward_batch.out_cache_loc)"),
            std::string::npos)
      << o.out;
}

// A vLLM adapter whose every capture call copies one row 2^40 rows past its buffer, on a wide
// case (L 256, K 64: a row is 64 KiB): its guard regions grew to 65536 rows, 8 GiB a rank.
const char* const kWideCase =
    R"({"format": "r3fuzz-case/1", "topology": {"dp": 2, "tp": 1, "ep": false, "sp": false},)"
    R"( "model": {"layers": 256, "top_k": 64, "experts": 64}, "max_num_tokens": 8, "tokens": [2, 1],)"
    R"( "padding": "none", "path": "gathered", "layer": 0})";

std::string vllm_adapter(const std::string& reply) {
  return "import json, sys\n"
         "for line in sys.stdin:\n"
         "    req = json.loads(line)\n"
         "    if req.get('type') == 'hello':\n"
         "        print(json.dumps({'type': 'hello', 'protocol': 'r3fuzz-adapter/1', 'name': 'v'}), flush=True)\n"
         "        continue\n"
         "    out = " + reply + "\n"
         "    out['id'] = req['id']\n"
         "    print(json.dumps(out), flush=True)\n";
}

TEST_F(AdapterReplyBounds, AWildDstRowSizesNoGuardBeyondTheBuffer) {
  write("wild.py", vllm_adapter("{'copies': [{'dst_row': 1 << 40, 'src_row': 0, 'rows': 1}]}"));
  write("rows.py", vllm_adapter("{'rows': [{'dst_row': 1 << 40, 'values': req['topk_ids'][0]}]}"));
  write("case.json", kWideCase);
  for (const char* adapter : {"wild.py", "rows.py"}) {
    // Was std::bad_alloc, exit 3. Still an overflow; its extent reads as the guard's, the
    // buffer's own 8 rows.
    const Output o = run_capped(std::string("replay case.json --impl 'external:python3 ") + adapter + "'");
    EXPECT_EQ(o.exit_code, 1) << adapter << ": " << o.out << o.err;
    EXPECT_NE(o.out.find(": overflow"), std::string::npos) << adapter << ": " << o.out;
    EXPECT_NE(o.out.find("capture buffer of dp 0 tp 0: 8 rows written past its end (it holds 8 rows)"),
              std::string::npos)
        << adapter << ": " << o.out;
  }
}

TEST_F(AdapterReplyBounds, CopiesThatReadMoreRowsThanTheCallHandsTheRankAreAnAdapterError) {
  // Two micro-batches; the first call's reply writes rows, so the second call's copies are
  // turned into rows: 100000 copies of the whole gathered batch (128 rows) were 12.8 million
  // row writes a rank.
  write("mb.json", R"({"format": "r3fuzz-case/1", "topology": {"dp": 4, "tp": 1, "ep": false, "sp": false},)"
                   R"( "model": {"layers": 4, "top_k": 64, "experts": 64}, "max_num_tokens": 64,)"
                   R"( "tokens": [64, 64, 64, 64], "padding": "dp_max", "path": "gathered", "layer": 0,)"
                   R"( "microbatches": 2})");
  write("many.py", vllm_adapter("{'rows': []} if req['call']['index'] == 0 else "
                                "{'copies': [{'dst_row': 0, 'src_row': 0, 'rows': 1 << 40}] * 100000}"));
  const Output o = run_capped("replay mb.json --impl 'external:python3 many.py'");
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;  // was 3: std::bad_alloc
  EXPECT_NE(o.out.find("many.py: adapter_error"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("failed to run: the reply to request 5: copies read more than the 128 rows the call hands the "
                       "rank (topk_ids; a capture copies each at most once)"),
            std::string::npos)
      << o.out;
}

TEST_F(AdapterReplyBounds, SglangErrorTextsAreStoredCutAndTheReportsStaySmall) {
  // 3 MB errors from every rank: the report, the JUnit file and the findings held them whole.
  write("sglang.py", kSglangAdapter);
  const Output o = run_capped("run --profile sglang --impl 'external:python3 sglang.py 4096 3000000' --cases 6 "
                              "--jobs 1 --no-shrink --out o --junit junit.xml");
  EXPECT_EQ(o.exit_code, 1) << o.out.substr(0, 2000) << o.err.substr(0, 2000);
  EXPECT_LT(o.out.size(), 200000u);
  EXPECT_NE(o.out.find("... (3000000 bytes in all)"), std::string::npos) << o.out.substr(0, 3000);
  EXPECT_LT(fs::file_size(work_ / "junit.xml"), 200000u);
  for (const auto& e : fs::directory_iterator(work_ / "o")) EXPECT_LT(fs::file_size(e.path()), 64000u) << e.path();
}

}  // namespace
