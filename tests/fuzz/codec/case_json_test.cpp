#include "fuzz/codec/case_json.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "reference/engines/sglang/fields.hpp"
#include "tests/support/case_gen.hpp"
#include "tests/support/scratch_dir.hpp"

namespace r3 {
namespace {

// design.md's example case.
constexpr const char* kDesignExample = R"({
  "format": "r3fuzz-case/1",
  "topology": {"dp": 2, "tp": 2, "ep": true, "sp": true},
  "model": {"layers": 4, "top_k": 2, "experts": 64},
  "max_num_tokens": 8,
  "tokens": [3, 2],
  "padding": "none",
  "path": "gathered",
  "monolithic": true,
  "layer": 1
}
)";

std::string error_of(std::string_view text) {
  auto c = case_from_json_text(text);
  return c ? "(accepted)" : c.error().message;
}

// The design example with `key` replaced by `value` (raw JSON), or removed when value is empty.
std::string with(const std::string& key, const std::string& value) {
  auto doc = nlohmann::ordered_json::parse(kDesignExample);
  if (value.empty()) doc.erase(key);
  else doc[key] = nlohmann::ordered_json::parse(value);
  return doc.dump();
}

TEST(CaseJson, ReadsTheDesignExample) {
  auto c = case_from_json_text(kDesignExample);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->topology, (Topology{2, 2, true, true}));
  EXPECT_EQ(c->model, (ModelShape{4, 2, 64}));
  EXPECT_EQ(c->max_num_tokens, 8);
  EXPECT_EQ(c->tokens, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(c->padding.mode, PaddingMode::none);
  EXPECT_EQ(c->path, Path::gathered);
  EXPECT_TRUE(c->monolithic);
  EXPECT_EQ(c->layer, 1);
  EXPECT_EQ(c->microbatches, 1);
  EXPECT_FALSE(c->dp_chunk);
  EXPECT_FALSE(c->metadata);
  EXPECT_FALSE(c->expect);
}

TEST(CaseJson, WritesTheDesignExampleByteForByte) {
  auto c = case_from_json_text(kDesignExample);
  ASSERT_TRUE(c);
  EXPECT_EQ(case_to_json_text(*c), kDesignExample);
}

TEST(CaseJson, ReadsAndWritesEveryOptionalField) {
  const std::string text = R"({
  "format": "r3fuzz-case/1",
  "topology": {"dp": 2, "tp": 2, "ep": true, "sp": true},
  "model": {"layers": 4, "top_k": 2, "experts": 64},
  "max_num_tokens": 8,
  "tokens": [3, 2],
  "padding": {"cudagraph": [4, 8, 16]},
  "path": "sp_shard",
  "monolithic": false,
  "layer": 1,
  "dp_chunk": 2,
  "note": "from a log",
  "expect": {"impl": "vllm-50874", "verdict": "wrong_rows", "severity": "latent"}
}
)";
  auto c = case_from_json_text(text);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->padding.mode, PaddingMode::cudagraph);
  EXPECT_EQ(c->padding.cudagraph_sizes, (std::vector<int64_t>{4, 8, 16}));
  EXPECT_EQ(c->dp_chunk, 2);
  EXPECT_EQ(c->note, "from a log");
  EXPECT_EQ(c->expect, (Expectation{"vllm-50874", Verdict::wrong_rows, Severity::latent}));
  EXPECT_EQ(case_to_json_text(*c), text);
}

TEST(CaseJson, MetadataLocalSizesNullMeansExplicitlyUnset) {
  auto c = case_from_json_text(with("metadata", R"({"num_tokens_across_dp": [3, 2], "local_sizes": null})"));
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_TRUE(c->metadata);
  EXPECT_EQ(c->metadata->num_tokens_across_dp, (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(c->metadata->local_sizes_given);
  EXPECT_FALSE(c->metadata->local_sizes);
  EXPECT_NE(case_to_json_text(*c).find(R"("metadata": {"num_tokens_across_dp": [3, 2], "local_sizes": null})"),
            std::string::npos);

  auto absent = case_from_json_text(with("metadata", R"({"num_tokens_across_dp": [3, 2]})"));
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->metadata->local_sizes_given);
}

TEST(CaseJson, MicrobatchesOneIsTheOmittedDefault) {
  auto doc = nlohmann::ordered_json::parse(kDesignExample);
  doc["padding"] = "dp_max";
  doc["microbatches"] = 1;
  auto c = case_from_json_text(doc.dump());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(case_to_json_text(*c).find("microbatches"), std::string::npos);
  doc["microbatches"] = 2;
  auto two = case_from_json_text(doc.dump());
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_NE(case_to_json_text(*two).find("\"layer\": 1,\n  \"microbatches\": 2\n}"), std::string::npos);
}

TEST(CaseJson, RejectsUnknownKeysNamingKeyAndObject) {
  EXPECT_EQ(error_of(with("bogus", "1")),
            "case: unknown key \"bogus\" (allowed: format, engine, topology, model, max_num_tokens, tokens, padding, "
            "idle_dummy, path, monolithic, layer, microbatches, dp_chunk, metadata, profile, note, expect)");
  EXPECT_EQ(error_of(with("topology", R"({"dp": 2, "tp": 2, "ep": true, "sp": true, "pp": 1})")),
            "topology: unknown key \"pp\" (allowed: dp, tp, ep, sp)");
  EXPECT_EQ(error_of(with("metadata", R"({"local_size": [1]})")),
            "metadata: unknown key \"local_size\" (allowed: num_tokens_across_dp, local_sizes)");
  EXPECT_EQ(error_of(with("padding", R"({"cudagraph": [1], "eager": true})")),
            "padding: unknown key \"eager\" (allowed: cudagraph)");
  EXPECT_EQ(error_of(with("expect", R"({"impl": "x", "verdict": "pass", "why": 1})")),
            "expect: unknown key \"why\" (allowed: impl, verdict, severity)");
}

TEST(CaseJson, NamesWrongTypes) {
  EXPECT_EQ(error_of(with("topology", R"({"dp": "2", "tp": 2, "ep": true, "sp": true})")),
            "topology.dp: expected an integer, got string");
  EXPECT_EQ(error_of(with("topology", R"({"dp": 2, "tp": 2, "ep": 1, "sp": true})")),
            "topology.ep: expected true or false, got number");
  EXPECT_EQ(error_of(with("max_num_tokens", "8.5")), "max_num_tokens: expected an integer, got number 8.5");
  EXPECT_EQ(error_of(with("tokens", R"([3, "2"])")), "tokens[1]: expected an integer, got string");
  EXPECT_EQ(error_of(with("tokens", "3")), "tokens: expected a list of integers, got number");
  EXPECT_EQ(error_of(with("path", "1")), "path: expected a string, got number");
  EXPECT_EQ(error_of(with("padding", "[1]")),
            "padding: expected \"none\", \"dp_max\" or {\"cudagraph\": [sizes...]}, got array");
  EXPECT_EQ(error_of(with("model", "[]")), "model: expected an object, got array");
  EXPECT_EQ(error_of("[1, 2]"), "case: expected an object, got array");
  EXPECT_EQ(error_of(with("layer", "4294967296")), "layer: 4294967296 is out of range for a 32-bit integer");
  EXPECT_EQ(error_of(with("max_num_tokens", "18446744073709551615")),
            "max_num_tokens: 18446744073709551615 is out of range for a 64-bit integer");
}

TEST(CaseJson, NamesMissingKeysAndBadEnums) {
  EXPECT_EQ(error_of(with("tokens", "")), "tokens: required key is missing");
  EXPECT_EQ(error_of(with("topology", R"({"dp": 2, "tp": 2, "ep": true})")), "topology.sp: required key is missing");
  EXPECT_EQ(error_of(with("format", "\"r3fuzz-case/2\"")),
            "format: \"r3fuzz-case/2\" is not supported (expected \"r3fuzz-case/1\")");
  EXPECT_EQ(error_of(with("path", "\"ubatch\"")), "path: \"ubatch\" is not one of single, gathered, local, sp_shard");
  EXPECT_EQ(error_of(with("padding", "\"max\"")),
            "padding: \"max\" is not one of \"none\", \"dp_max\" or {\"cudagraph\": [sizes...]}");
  EXPECT_EQ(error_of(with("expect", R"({"impl": "x", "verdict": "boom"})")),
            "expect.verdict: \"boom\" is not one of pass, wrong_rows, overflow, capacity, spurious_reject, "
            "missed_reject, collective_mismatch, adapter_error");
  EXPECT_EQ(error_of(with("expect", R"({"impl": "x", "verdict": "pass", "severity": "fatal"})")),
            "expect.severity: \"fatal\" is not one of failure, latent, null");
}

TEST(CaseJson, MonolithicMayBeAbsent) {
  auto c = case_from_json_text(with("monolithic", ""));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_FALSE(c->monolithic);
}

TEST(CaseJson, RunsValidationAfterParsing) {
  EXPECT_EQ(error_of(with("tokens", "[3, 2, 1]")), "tokens: has 3 entries, topology.dp is 2 (one count per DP rank)");
  EXPECT_EQ(error_of(with("layer", "4")), "layer: 4 is out of range [0, 3]");
  EXPECT_EQ(error_of(with("max_num_tokens", "0")), "max_num_tokens: 0 is out of range [1, 16777216]");
}

TEST(CaseJson, MalformedJsonGivesTheParserPosition) {
  EXPECT_EQ(error_of("{\"format\": \"r3fuzz-case/1\",\n  \"topology\": }"),
            "invalid JSON: parse error at line 2, column 15: syntax error while parsing value - unexpected '}'; "
            "expected '[', '{', or a literal");
  EXPECT_EQ(error_of(""), "invalid JSON: parse error at line 1, column 1: syntax error while parsing value - "
                          "unexpected end of input; expected '[', '{', or a literal");
}

TEST(CaseJson, FileErrorsNameTheFile) {
  const test::ScratchDir scratch("r3fuzz-codec-test");
  const std::filesystem::path& dir = scratch.path();
  const std::string missing = (dir / "missing.json").string();
  auto none = read_case_file(missing);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, missing + ": cannot open: No such file or directory");

  const std::string bad = (dir / "bad.json").string();
  std::ofstream(bad) << with("tokens", "[1]");
  auto invalid = read_case_file(bad);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().message, bad + ": tokens: has 1 entries, topology.dp is 2 (one count per DP rank)");

  const std::string good = (dir / "good.json").string();
  auto c = case_from_json_text(kDesignExample);
  ASSERT_TRUE(c);
  ASSERT_TRUE(write_case_file(good, *c));
  auto back = read_case_file(good);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, *c);

  auto unwritable = write_case_file((dir / "no-such-dir" / "x.json").string(), *c);
  ASSERT_FALSE(unwritable);
  EXPECT_EQ(unwritable.error().message,
            (dir / "no-such-dir" / "x.json").string() + ": cannot open for writing: No such file or directory");
}

// An SGLang case (its codec part, fuzz/engines/sglang/codec_json.cpp): the issue's key order,
// last_decode_bucket written with cuda_graph, max_prefill_tokens only when not the default.
constexpr const char* kSglangExample = R"({
  "format": "r3fuzz-case/1",
  "engine": "sglang",
  "topology": {"dp": 1, "tp": 1, "dp_attention": false, "a2a": "none"},
  "model": {"layers": 2, "top_k": 1, "experts": 8},
  "forward": "extend",
  "tokens": [3],
  "cuda_graph": {"prefill": [4, 8]},
  "last_decode_bucket": null,
  "tbo": false,
  "chunked_prefill_size": 16,
  "max_running_requests": 4,
  "max_prefill_tokens": 8,
  "layer": 0,
  "profile": "sglang-miles",
  "note": "from a log"
}
)";

TEST(CaseJsonSglang, ReadsAndWritesItsOwnDocumentByteForByte) {
  auto c = case_from_json_text(kSglangExample);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->engine, sglang::engine());
  ASSERT_NE(sglang::forward_of(*c), nullptr);
  EXPECT_EQ(sglang::forward_of(*c)->max_prefill_tokens, 8);
  EXPECT_EQ(c->profile, Profile::of(sglang::engine(), 1));
  EXPECT_EQ(case_to_json_text(*c), kSglangExample);
  EXPECT_EQ(case_from_json(case_to_json(*c)).value(), *c);
}

TEST(CaseJsonSglang, TheEngineKeyChoosesTheFields) {
  auto doc = nlohmann::ordered_json::parse(kSglangExample);
  doc["max_num_tokens"] = 8;
  EXPECT_EQ(error_of(doc.dump()),
            "case: unknown key \"max_num_tokens\" (allowed: format, engine, topology, model, forward, tokens, requests, "
            "spec_width, cuda_graph, last_decode_bucket, tbo, chunked_prefill_size, max_running_requests, "
            "max_prefill_tokens, layer, profile, note, expect)");
  EXPECT_EQ(error_of(with("engine", "\"tgi\"")), "engine: \"tgi\" is not one of vllm, sglang, trtllm, ascend");
  EXPECT_EQ(error_of(with("engine", "1")), "engine: expected a string, got number");
  // "engine": "vllm" is the default engine's document, as with no "engine" at all.
  auto explicit_default = case_from_json_text(with("engine", "\"vllm\""));
  ASSERT_TRUE(explicit_default) << explicit_default.error().message;
  EXPECT_EQ(*explicit_default, case_from_json_text(kDesignExample).value());
}

RC_GTEST_PROP(CaseJsonProperty, TextRoundTripIsIdentity, ()) {
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = true});
  auto back = case_from_json_text(case_to_json_text(c));
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == c);
}

RC_GTEST_PROP(CaseJsonProperty, DocumentRoundTripIsIdentity, ()) {
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = true});
  auto back = case_from_json(case_to_json(c));
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == c);
}

RC_GTEST_PROP(CaseJsonProperty, WritingIsStable, ()) {
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = true});
  const std::string once = case_to_json_text(c);
  RC_ASSERT(case_to_json_text(*case_from_json_text(once)) == once);
}

}  // namespace
}  // namespace r3
