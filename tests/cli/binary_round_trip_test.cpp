// End-to-end: every case the JSON reader accepts goes through the fuzz-input form and back
// unchanged (docs/FUZZING.md): `r3fuzz seed --to-binary`, then `seed --to-json`, on the real
// binary; and a case the binary form cannot carry is refused by the JSON reader, never written
// as bytes that mean another case.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/run_binary.hpp"
#include "tests/support/work_dir_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using Output = r3::test::BinaryRun;

class BinaryRoundTrip : public r3::test::WorkDirFixture {
 protected:
  BinaryRoundTrip() : WorkDirFixture("r3fuzz-binary-round-trip") {}
};

// Chunked prefill on, and a max_prefill_tokens of its own (8): version 2 of the binary form had
// no room for it and gave back SGLang's default, 16384.
const std::string kChunked =
    R"({"format": "r3fuzz-case/1", "engine": "sglang", "topology": {"dp": 2, "tp": 1, "dp_attention": true,)"
    R"( "a2a": "none"}, "model": {"layers": 2, "top_k": 1, "experts": 8}, "forward": "extend", "tokens": [3, 1],)"
    R"( "tbo": false, "chunked_prefill_size": 16, "max_running_requests": 4, "max_prefill_tokens": 8, "layer": 0})";

TEST_F(BinaryRoundTrip, SeedToBinaryAndBackKeepsMaxPrefillTokensWithChunkedPrefill) {
  write("in/chunked.json", kChunked);
  Output o = run("seed --to-binary --out bin in/chunked.json");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  o = run("seed --to-json --out back bin/chunked.bin");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string back = r3::test::read_file_bytes(work_ / "back/chunked.json");
  EXPECT_NE(back.find("\"max_prefill_tokens\": 8,"), std::string::npos) << back;  // was absent: 16384
  EXPECT_NE(back.find("\"chunked_prefill_size\": 16,"), std::string::npos) << back;
  // And the case read back is the case written: one more round gives the same bytes.
  o = run("seed --to-binary --out bin2 back/chunked.json");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(r3::test::read_file_bytes(work_ / "bin2/chunked.bin"), r3::test::read_file_bytes(work_ / "bin/chunked.bin"));
}

TEST_F(BinaryRoundTrip, AnSglangNoteOverOneMebibyteIsRefusedLikeAVllmOne) {
  std::string c = kChunked;
  c.insert(c.rfind('}'), ", \"note\": \"" + std::string((1 << 20) + 1, 'n') + "\"");
  write("big.json", c);
  // Was exit 0 and a .bin that decodes to no case (its note's length folded into the limit).
  const Output o = run("seed --to-binary --out bin big.json");
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_EQ(o.err, "r3fuzz seed: big.json: note: 1048577 bytes, at most 1048576 (1 MiB, the binary case format's "
                   "limit)\n");
  EXPECT_FALSE(fs::exists(work_ / "bin/big.bin"));
  std::string fits = kChunked;
  fits.insert(fits.rfind('}'), ", \"note\": \"" + std::string(1 << 20, 'n') + "\"");
  write("fits.json", fits);
  ASSERT_EQ(run("seed --to-binary --out bin fits.json").exit_code, 0);
  const Output back = run("seed --to-json --out back bin/fits.bin");
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_NE(r3::test::read_file_bytes(work_ / "back/fits.json").find(std::string(1 << 20, 'n')), std::string::npos);
}

}  // namespace
