#include "fuzz/codec/trace_binary.hpp"

#include <algorithm>
#include <ostream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "fuzz/codec/trace_json.hpp"
#include "tests/reference/trace/example_trace.hpp"

namespace r3 {

void PrintTo(const Trace& t, std::ostream* os);  // trace_json_test.cpp: the trace's JSON text

namespace test {
Trace every_field_trace();  // trace_json_test.cpp
}  // namespace test

namespace {

using Bytes = std::vector<uint8_t>;

std::string error_of(const Bytes& bytes) {
  auto t = decode_trace(bytes);
  return t ? "(decoded)" : t.error().message;
}

void append_text(Bytes& out, std::string_view text) {
  out.push_back(static_cast<uint8_t>(text.size()));
  out.insert(out.end(), text.begin(), text.end());
}

// The example's bytes, field by field as trace_binary.hpp lays them out.
Bytes example_bytes() {
  Bytes b = {'T', 0x11,  // version; flags: prefix_cache | profile
             1,          // engine: sglang, the second registered
             0, 0,       // dp-1, tp-1
             0, 1, 15,   // layers-1, top_k-1, experts-1
             7, 4, 1, 63,  // token_budget-1, chunk, page-1, kv_slots-1
             3, 0, 1, 3,   // three decode graph sizes, each -1
             2};           // two knobs, by key
  b.push_back(0);
  append_text(b, "a2a");
  append_text(b, "\"none\"");
  b.push_back(0);
  append_text(b, "dp_attention");
  append_text(b, "false");
  const Bytes rest = {
      3,                                   // requests
      0, 0, 5, 5, 6, 7, 8, 9, 3, 1, 2, 3,  // length; dp; prompt; outputs
      1, 0, 6, 5, 6, 7, 8, 4, 4, 1, 2,     // eos
      4, 0, 2, 3, 3, 1, 7, 0,              // length | max_new present; ...; max_new 0
      5,                                   // steps: events, then run entries (kind, req, lo[, hi])
      0, 2, 0, 0, 0, 4, 0, 2, 0, 2,        //
      0, 1, 0, 0, 4, 5,                    //
      1, 0, 1, 4, 1, 0, 1, 4, 6,           // hit: kind 0, req 1, len 4
      0, 1, 1, 0, 5,                       // decode: kind 1
      0, 1, 1, 0, 6,                       //
      3};                                  // profile: sglang's code
  b.insert(b.end(), rest.begin(), rest.end());
  return b;
}

TEST(TraceBinary, EncodesIssue29sExampleByteForByte) {
  ASSERT_EQ(parse_profile("sglang")->code(), 3u);
  EXPECT_EQ(encode_trace(test::example_trace()), example_bytes());
  auto t = decode_trace(example_bytes());
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(*t, test::example_trace());
}

TEST(TraceBinary, RoundTripsTheExampleAndEveryField) {
  Trace tree = test::every_field_trace();
  tree.config.spec->tree = true;
  tree.config.overlap = false;
  tree.profile.reset();
  tree.expect.reset();
  tree.note.clear();
  for (const Trace& t : {test::example_trace(), test::every_field_trace(), tree}) {
    const Bytes bytes = encode_trace(t);
    auto back = decode_trace(bytes);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, t);
    EXPECT_EQ(encode_trace(*back), bytes);
  }
}

TEST(TraceBinary, FoldsOversizedValuesIntoTheirRanges) {
  Bytes b = example_bytes();
  b[6] = 65;  // top_k-1: 1 + 65 mod 64 = 2
  const size_t request0_dp = b.size() - 67;
  ASSERT_EQ(b[request0_dp - 2], 3);  // the number of requests
  b[request0_dp] = 1;                // request 0's dp folds into the one rank: 0
  const size_t step0_second_req = b.size() - 29;
  ASSERT_EQ(b[step0_second_req], 2);
  b[step0_second_req] = 5;  // request 5 of 3: 5 mod 3 = 2
  auto t = decode_trace(b);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(*t, test::example_trace());
}

TEST(TraceBinary, EveryTruncationIsAnError) {
  const Bytes full = encode_trace(test::every_field_trace());
  EXPECT_EQ(error_of({}), "binary trace, byte 0: truncated: the input ends before the version byte");
  for (size_t n = 1; n < full.size(); ++n) {
    const std::string error = error_of(Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
    EXPECT_EQ(error.rfind("binary trace, byte ", 0), 0u) << n << ": " << error;
    EXPECT_NE(error.find(": truncated: the input ends before "), std::string::npos) << n << ": " << error;
  }
}

TEST(TraceBinary, VersionAndTrailingBytesAreNamed) {
  Bytes b = example_bytes();
  b[0] = 1;
  EXPECT_EQ(error_of(b), "binary trace: version 1 is not supported (expected 84)");
  // Bytes after the trailer start the copies section: one entry whose step is missing.
  b = example_bytes();
  b.push_back(0);
  EXPECT_EQ(error_of(b), "binary trace, byte " + std::to_string(b.size()) +
                             ": truncated: the input ends before copies[0].step");
  b = example_bytes();
  for (const uint8_t x : {0, 1, 3, 9}) b.push_back(x);
  EXPECT_EQ(error_of(b), "binary trace, byte " + std::to_string(b.size() - 1) + ": 1 trailing byte(s) after the trace");
}

// The optional trailing section: the example's bytes, then the number of entries - 1 and each
// entry's step and done_before_step. Bytes without it decode as before.
TEST(TraceBinary, CopiesAreAnOptionalTrailingSection) {
  Trace t = test::example_trace();
  t.copies = {{1, 3}, {2, 5}};
  Bytes expected = example_bytes();
  for (const uint8_t x : {1, 1, 3, 2, 5}) expected.push_back(x);
  EXPECT_EQ(encode_trace(t), expected);
  auto back = decode_trace(expected);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, t);
  auto old = decode_trace(example_bytes());
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_TRUE(old->copies.empty());
  // The record's rules are validate_trace's.
  Bytes bad = example_bytes();
  for (const uint8_t x : {0, 3, 3}) bad.push_back(x);
  EXPECT_EQ(error_of(bad), "copies[0].done_before_step: 3 is not after step 3");
}

TEST(TraceBinary, KnobsObeyTheJsonRules) {
  Trace t = test::example_trace();
  t.knobs = {{"config.hicache", "1e2"}};
  EXPECT_EQ(error_of(encode_trace(t)), "config.hicache: the knob's value 1e2 is not written as the JSON writer writes it (100.0)");
  t.knobs = {{"config.page", "2"}};
  EXPECT_EQ(error_of(encode_trace(t)), "config.page: a generic key of config, not an engine knob");
  t.knobs = {{"topology.a2a", "1"}, {"topology.b2b", "1"}};
  Bytes b = encode_trace(t);
  const Bytes b2b = {'b', '2', 'b'};
  auto at = std::search(b.begin(), b.end(), b2b.begin(), b2b.end());
  ASSERT_NE(at, b.end());
  *at = 'a';
  *(at + 2) = 'a';
  EXPECT_EQ(error_of(b), "topology.a2a: the knob appears twice");
}

TEST(TraceBinary, ValuesTheJsonReaderRefusesAreRefused) {
  Trace t = test::example_trace();
  t.expect = TraceExpectation{"", "pass"};
  EXPECT_EQ(error_of(encode_trace(t)), "expect.impl: must name an implementation, got an empty string");

  t = test::example_trace();
  t.requests.clear();
  EXPECT_EQ(error_of(encode_trace(t)), "steps[0].run[0].req: names a request, but the trace has none");

  t = test::example_trace();
  t.note = "\xff";
  const Bytes b = encode_trace(t);
  EXPECT_EQ(error_of(b), "binary trace, byte " + std::to_string(b.size() - 1) + ": note: not valid UTF-8");
}

TEST(TraceBinary, TraceRulesAreValidateTracesErrors) {
  Trace t = test::example_trace();
  t.steps[1].run[0] = test::extend(0, 3, 5);
  EXPECT_EQ(error_of(encode_trace(t)), "steps[1].run[0]: request 0 extends from 3 but holds KV for positions [0, 4)");
}

// libFuzzer's view: any bytes. Each decodes to a valid trace or an error, never a crash, and a
// decoded trace's canonical bytes decode to it again (the JSON form too).
TEST(TraceBinary, GarbageAndMutationsDecodeToTracesOrErrors) {
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> byte(0, 255);
  int decoded = 0;
  auto check = [&](const Bytes& bytes) {
    auto t = decode_trace(bytes);
    if (!t) return;
    ++decoded;
    auto again = decode_trace(encode_trace(*t));
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(*again, *t);
    auto json = trace_from_json_text(trace_to_json_text(*t));
    ASSERT_TRUE(json) << json.error().message;
    EXPECT_EQ(*json, *t);
  };
  for (int i = 0; i < 2000; ++i) {
    Bytes bytes(static_cast<size_t>(i % 97));
    for (auto& b : bytes) b = static_cast<uint8_t>(byte(rng));
    if (!bytes.empty() && i % 2 == 0) bytes[0] = kTraceBinaryVersion;
    check(bytes);
  }
  const Bytes base = encode_trace(test::every_field_trace());
  for (size_t i = 0; i < base.size(); ++i) {
    for (uint8_t value : {uint8_t{0}, uint8_t{1}, uint8_t{0x7f}, uint8_t{0x80}, static_cast<uint8_t>(byte(rng))}) {
      Bytes bytes = base;
      bytes[i] = value;
      check(bytes);
    }
  }
  EXPECT_GT(decoded, 0);
}

}  // namespace
}  // namespace r3
