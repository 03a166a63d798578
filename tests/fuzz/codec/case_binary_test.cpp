#include "fuzz/codec/case_binary.hpp"

#include <random>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fuzz/codec/case_json.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/validate.hpp"
#include "reference/limits.hpp"
#include "reference/provenance.hpp"
#include "reference/validate.hpp"
#include "tests/support/case_fixtures.hpp"
#include "tests/support/case_gen.hpp"

namespace r3 {
namespace {

using Bytes = std::vector<uint8_t>;

// design.md's example case.
Case design_example() { return test::make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered, true); }

std::string error_of(const Bytes& bytes, const BinaryLimits& limits = concrete_binary_limits()) {
  auto c = case_from_binary(bytes, limits);
  return c ? std::string("(decoded)") : c.error().message;
}

TEST(CaseBinary, EncodesTheDesignExampleByteForByte) {
  // version, flags ep|sp|monolithic, kinds path=gathered padding=none, then dp-1 tp-1 L-1 K-1
  // E-1 M-1 layer U-1 and the tokens.
  const Bytes expected = {1, 0x07, 0x01, 1, 1, 3, 1, 63, 7, 1, 0, 3, 2};
  EXPECT_EQ(case_to_binary(design_example()), expected);
  auto decoded = case_from_binary(expected);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, design_example());
}

TEST(CaseBinary, EncodesCudagraphSizesAsGaps) {
  Case c = design_example();
  c.padding = {PaddingMode::cudagraph, {1, 2, 4, 8}};
  const Bytes bytes = case_to_binary(c);
  // kinds: gathered (1) | cudagraph (2 << 2); sizes: count-1, first-1, then gap-1 each.
  EXPECT_EQ(bytes[2], 0x09);
  const Bytes tail(bytes.end() - 5, bytes.end());
  EXPECT_EQ(tail, (Bytes{3, 0, 0, 1, 3}));
  auto decoded = case_from_binary(bytes);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->padding.cudagraph_sizes, (std::vector<int64_t>{1, 2, 4, 8}));
}

TEST(CaseBinary, FoldsOversizedValuesIntoTheLimits) {
  // dp-1 = 9 folds to 1 + 9 mod 8 = 2; M-1 = 64 + 4 folds to 1 + 68 mod 64 = 5; token 11 folds
  // into [0, 5]: 11 mod 6 = 5.
  const Bytes bytes = {1, 0x00, 0x01, 9, 0, 0, 0, 0, 68, 0, 0, 11, 2};
  auto decoded = case_from_binary(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->topology.dp, 2);
  EXPECT_EQ(decoded->max_num_tokens, 5);
  EXPECT_EQ(decoded->tokens, (std::vector<int64_t>{5, 2}));
  // The canonical encoding holds the folded values.
  EXPECT_EQ(case_to_binary(*decoded), (Bytes{1, 0x00, 0x01, 1, 0, 0, 0, 0, 4, 0, 0, 5, 2}));
}

TEST(CaseBinary, RejectsMalformedInputNamingTheProblem) {
  EXPECT_EQ(error_of({}), "binary case, byte 0: truncated: the input ends before the version byte");
  EXPECT_EQ(error_of({6, 0, 0}),
            "binary case: version 6 is not supported (expected 1 for vLLM, 2 or 3 for SGLang, 4 for TensorRT-LLM, 5 for "
            "vllm-ascend)");
  Bytes trailing = case_to_binary(design_example());
  trailing.push_back(0);
  EXPECT_EQ(error_of(trailing), "binary case, byte 13: 1 trailing byte(s) after the case");
  Bytes overlong = {1, 0, 0};
  overlong.insert(overlong.end(), 10, 0xFF);
  overlong.push_back(0x01);
  EXPECT_EQ(error_of(overlong), "binary case, byte 12: topology.dp: varint exceeds 64 bits");
}

TEST(CaseBinary, EveryProperPrefixIsRejected) {
  Case c = design_example();
  c.padding = {PaddingMode::cudagraph, {2, 16}};
  c.metadata = MetadataOverride{std::vector<int64_t>{3, 3}, true, std::vector<int64_t>{2, 2, 2, 2}};
  const Bytes bytes = case_to_binary(c);
  for (size_t n = 0; n < bytes.size(); ++n) {
    const Bytes prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_NE(error_of(prefix).find("truncated"), std::string::npos) << "prefix of " << n << " bytes";
  }
}

TEST(CaseBinary, RunsValidateOnTheDecodedCase) {
  // sp without ep: flags = sp only.
  const Bytes bytes = {1, 0x02, 0x01, 1, 1, 0, 0, 0, 3, 0, 0, 1, 1};
  EXPECT_EQ(error_of(bytes), "topology.sp: sequence parallel needs ep true (vLLM enables SP MoE only with EP)");
}

TEST(CaseBinary, TextNeedsValidUtf8AndFullLimits) {
  Case c = design_example();
  c.note = "DeepSeek-V3 \xe2\x80\x94 8 GPUs";
  c.expect = Expectation{"vllm-50874", Verdict::wrong_rows, Severity::latent};
  const Bytes bytes = case_to_binary(c);
  auto full = case_from_binary(bytes, full_binary_limits());
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(*full, c);
  // The fuzz limits hold no text: the expectation's empty impl is refused.
  EXPECT_EQ(error_of(bytes), "expect.impl: must name an implementation, got an empty string");

  Case bad = design_example();
  bad.note = "\xc3\x28";  // a lead byte followed by a non-continuation byte
  EXPECT_EQ(error_of(case_to_binary(bad), full_binary_limits()), "binary case, byte 14: note: not valid UTF-8");
}

TEST(CaseBinary, ConcreteLimitsKeepEveryDecodedCaseRunnableConcretely) {
  const BinaryLimits l = concrete_binary_limits();
  Case c;
  c.topology = {l.max_dp, l.max_tp, true, true};
  c.model = {l.max_layers, l.max_top_k, l.max_experts};
  c.max_num_tokens = l.max_rows;
  c.tokens.assign(static_cast<size_t>(l.max_dp), l.max_rows);
  c.padding = {PaddingMode::cudagraph, {l.max_cudagraph_size}};
  c.path = Path::gathered;
  c.layer = l.max_layers - 1;
  ASSERT_TRUE(validate(c));
  EXPECT_TRUE(provenance_fits(c));
  auto decoded = case_from_binary(case_to_binary(c));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, c);
}

RC_GTEST_PROP(CaseBinaryProperty, DecodeOfEncodeIsIdentityUnderFullLimits, ()) {
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = true});
  RC_PRE(validate(c).ok());
  auto decoded = case_from_binary(case_to_binary(c), full_binary_limits());
  if (!decoded) RC_FAIL(decoded.error().message);
  RC_ASSERT(*decoded == c);
}

RC_GTEST_PROP(CaseBinaryProperty, DecodeOfEncodeIsIdentityUnderConcreteLimits, ()) {
  Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true});
  const BinaryLimits limits = concrete_binary_limits();
  c.model.top_k = std::min(c.model.top_k, limits.max_top_k);
  auto& sizes = c.padding.cudagraph_sizes;
  if (sizes.size() > static_cast<size_t>(limits.max_cudagraph_sizes)) sizes.resize(limits.max_cudagraph_sizes);
  RC_PRE(validate(c).ok());
  auto decoded = case_from_binary(case_to_binary(c));
  if (!decoded) RC_FAIL(decoded.error().message);
  RC_ASSERT(*decoded == c);
}

// ---- SGLang cases -------------------------------------------------------------------------

// An extend forward with chunked prefill on and a max_prefill_tokens of its own: version 2 had
// no room for the latter and decoded it as 16384.
const char* const kChunkedWithMaxPrefill =
    R"({"format": "r3fuzz-case/1", "engine": "sglang", "topology": {"dp": 1, "tp": 1, "dp_attention": false,)"
    R"( "a2a": "none"}, "model": {"layers": 2, "top_k": 1, "experts": 8}, "forward": "extend", "tokens": [3],)"
    R"( "tbo": false, "chunked_prefill_size": 16, "max_running_requests": 4, "max_prefill_tokens": 8, "layer": 0})";

TEST(CaseBinarySglang, KeepsMaxPrefillTokensWhenChunkedPrefillIsOn) {
  const Case c = case_from_json_text(kChunkedWithMaxPrefill).value();
  ASSERT_EQ(sglang::forward_of(c)->max_prefill_tokens, 8);
  const Bytes bytes = case_to_binary(c);
  // Version 3: version 2's bytes with max_prefill_tokens-1 after chunked_prefill_size-1.
  // flags: chunked (bit 7); kinds: a2a none, extend; dp-1, tp-1, L-1, K-1, E-K, layer, mrr-1,
  // cps-1, mpt-1, tokens.
  EXPECT_EQ(bytes, (Bytes{3, 0x80, 0x00, 0, 0, 1, 0, 7, 0, 3, 15, 7, 3}));
  const Result<Case> back = case_from_fuzz_input(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, c);
  EXPECT_EQ(sglang::forward_of(*back)->max_prefill_tokens, 8);  // was 16384
  EXPECT_NE(case_to_json_text(*back).find("\"max_prefill_tokens\": 8"), std::string::npos) << case_to_json_text(*back);
}

TEST(CaseBinarySglang, VersionTwoInputsDecodeAsTheyAlwaysDid) {
  // The same case at SGLang's default max_prefill_tokens is version 2, byte for byte as before:
  // the version byte and no max_prefill_tokens field.
  Case c = case_from_json_text(kChunkedWithMaxPrefill).value();
  sglang::forward_of(c)->max_prefill_tokens = 16384;
  EXPECT_EQ(case_to_binary(c), (Bytes{2, 0x80, 0x00, 0, 0, 1, 0, 7, 0, 3, 15, 3}));
  // A version 2 input with chunking on still means 16384, and a version 3 one without chunking
  // reads as version 2 does (its canonical form is version 2).
  EXPECT_EQ(case_from_fuzz_input(Bytes{2, 0x80, 0x00, 0, 0, 1, 0, 7, 0, 3, 15, 3}).value(), c);
  Case unchunked = c;
  sglang::forward_of(unchunked)->chunked_prefill_size = -1;
  sglang::forward_of(unchunked)->max_prefill_tokens = 16;
  EXPECT_EQ(case_to_binary(unchunked), (Bytes{2, 0x00, 0x00, 0, 0, 1, 0, 7, 0, 3, 15, 3}));
  EXPECT_EQ(case_from_fuzz_input(Bytes{3, 0x00, 0x00, 0, 0, 1, 0, 7, 0, 3, 15, 3}).value(), unchunked);
}

TEST(CaseBinarySglang, EveryProperPrefixOfAVersionThreeCaseIsRejected) {
  const Bytes bytes = case_to_binary(case_from_json_text(kChunkedWithMaxPrefill).value());
  for (size_t n = 0; n < bytes.size(); ++n) {
    const Bytes prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_NE(error_of(prefix, full_binary_limits()).find("truncated"), std::string::npos) << "prefix of " << n << " bytes";
  }
}

// One value in [lo, hi], often an end of the range.
int64_t edge_value(int64_t lo, int64_t hi) {
  return *rc::gen::oneOf(rc::gen::just(lo), rc::gen::just(hi), rc::gen::inRange(lo, hi + 1));
}

// Strictly increasing multiples of `unit`, each at most limits::kMaxRows, sometimes the largest.
std::vector<int64_t> gen_buckets(int64_t unit) {
  const int64_t most_units = limits::kMaxRows / unit;
  std::vector<int64_t> out;
  int64_t units = 0;
  const int count = *rc::gen::inRange(0, 5);
  for (int i = 0; i < count && units < most_units; ++i) {
    units = edge_value(units + 1, std::min(most_units, units + 64));
    out.push_back(units * unit);
  }
  if (!out.empty() && units < most_units && *rc::gen::arbitrary<bool>()) out.push_back(most_units * unit);
  return out;
}

// The texts and records no behaviour reads, shared by both engines' generators.
void gen_extras(Case& c) {
  if (*rc::gen::arbitrary<bool>())
    c.profile = *rc::gen::elementOf(all_profiles());
  c.note = *rc::gen::element<std::string>("", "from a production log", "quote \" and \\ and \xc3\xa9",
                                          std::string("a NUL\0byte", 10),
                                          std::string(static_cast<size_t>(limits::kMaxTextBytes), 'n'),
                                          std::string(static_cast<size_t>(limits::kMaxTextBytes) + 1, 'n'));
  if (*rc::gen::arbitrary<bool>()) {
    c.expect = Expectation{
        *rc::gen::element<std::string>("sglang", "external:python3 a.py",
                                       std::string(static_cast<size_t>(limits::kMaxTextBytes), 'i')),
        *rc::gen::elementOf(std::vector<Verdict>(all_verdicts().begin(), all_verdicts().end())),
        *rc::gen::elementOf(std::vector<Severity>(all_severities().begin(), all_severities().end()))};
  }
}

void gen_model(Case& c) {
  c.model.experts = static_cast<int>(edge_value(1, limits::kMaxExperts));
  c.model.top_k = static_cast<int>(edge_value(1, std::min<int64_t>(limits::kMaxTopK, c.model.experts)));
  c.model.layers = static_cast<int>(edge_value(1, limits::kMaxLayers));
  c.layer = static_cast<int>(edge_value(0, c.model.layers - 1));
}

// Every field of a vLLM case drawn on its own, anywhere in validate()'s ranges and often at their
// ends, where the rules between fields allow it; not through the case domain, whose choices
// follow a profile's (the round trip must hold for every case a file may hold).
rc::Gen<Case> gen_any_vllm_case() {
  return rc::gen::exec([] {
    Case c;
    c.topology.dp = static_cast<int>(*rc::gen::element<int64_t>(1, 2, 3, 7, limits::kMaxDp));
    c.topology.tp = static_cast<int>(edge_value(1, limits::kMaxTp));
    c.topology.ep = *rc::gen::arbitrary<bool>();
    c.topology.sp = c.topology.ep && c.topology.tp > 1 && c.topology.dp > 1 && *rc::gen::arbitrary<bool>();
    gen_model(c);
    c.max_num_tokens = edge_value(1, limits::kMaxRows);
    for (int d = 0; d < c.topology.dp; ++d) c.tokens.push_back(edge_value(0, c.max_num_tokens));
    c.padding.mode = *rc::gen::element(PaddingMode::none, PaddingMode::dp_max, PaddingMode::cudagraph);
    if (c.padding.mode == PaddingMode::cudagraph) {
      c.padding.cudagraph_sizes = gen_buckets(1);
      if (c.padding.cudagraph_sizes.empty()) c.padding.cudagraph_sizes.push_back(edge_value(1, limits::kMaxRows));
    }
    c.idle_dummy = *rc::gen::arbitrary<bool>();
    if (c.topology.dp == 1) c.path = Path::single;
    else if (c.topology.sp) c.path = *rc::gen::element(Path::gathered, Path::sp_shard);
    else c.path = *rc::gen::element(Path::gathered, Path::local);
    c.monolithic = (c.path == Path::single || c.path == Path::gathered) && *rc::gen::arbitrary<bool>();
    if (c.topology.dp > 1 && c.padding.mode == PaddingMode::dp_max && *rc::gen::arbitrary<bool>())
      c.microbatches = static_cast<int>(edge_value(2, limits::kMaxMicrobatches));
    if (c.microbatches == 1 && (c.path == Path::local || c.path == Path::sp_shard) && *rc::gen::arbitrary<bool>())
      c.dp_chunk = edge_value(1, limits::kMaxRows);
    if (c.microbatches == 1 && !c.dp_chunk && *rc::gen::arbitrary<bool>()) {
      MetadataOverride m;
      auto list = [] {
        std::vector<int64_t> v(static_cast<size_t>(*rc::gen::inRange(0, 6)));
        for (int64_t& x : v) x = edge_value(0, limits::kMaxRows);
        return v;
      };
      if (*rc::gen::arbitrary<bool>()) m.num_tokens_across_dp = list();
      m.local_sizes_given = *rc::gen::arbitrary<bool>();
      if (m.local_sizes_given && *rc::gen::arbitrary<bool>()) m.local_sizes = list();
      c.metadata = std::move(m);
    }
    gen_extras(c);
    return c;
  });
}

// Every vLLM case the JSON reader accepts goes JSON -> binary -> JSON unchanged.
RC_GTEST_PROP(CaseBinaryProperty, EveryVllmCaseTheJsonReaderAcceptsRoundTrips, ()) {
  const Case drawn = *gen_any_vllm_case();
  const Result<Case> read = case_from_json_text(case_to_json_text(drawn));
  RC_PRE(read.ok());
  RC_ASSERT(*read == drawn);
  const Bytes bytes = case_to_binary(*read);
  const Result<Case> decoded = case_from_fuzz_input(bytes);
  if (!decoded) RC_FAIL(decoded.error().message);
  RC_ASSERT(*decoded == *read);
  RC_ASSERT(case_to_binary(*decoded) == bytes);
}

// Every field of an SGLang case drawn on its own, anywhere in validate()'s ranges and often at
// their ends; not through the case domain, which never pairs chunked prefill with a
// max_prefill_tokens of its own (the combination version 2 dropped).
rc::Gen<Case> gen_any_sglang_case() {
  return rc::gen::exec([] {
    Case c;
    c.engine = sglang::engine();
    sglang::Forward& f = c.engine_fields.emplace<sglang::Forward>();
    f.dp_attention = *rc::gen::arbitrary<bool>();
    c.topology.dp = f.dp_attention ? static_cast<int>(*rc::gen::element<int64_t>(2, 3, 7, limits::kMaxDp)) : 1;
    c.topology.tp = static_cast<int>(edge_value(1, limits::kMaxTp));
    f.a2a = static_cast<sglang::A2a>(*rc::gen::inRange(0, sglang::kA2aCount));
    f.kind = static_cast<sglang::ForwardKind>(*rc::gen::inRange(0, 3));
    gen_model(c);
    if (f.kind == sglang::ForwardKind::verify) f.spec_width = edge_value(2, 64);
    f.chunked_prefill_size = *rc::gen::arbitrary<bool>() ? edge_value(1, limits::kMaxRows) : -1;
    f.max_running_requests = edge_value(1, limits::kMaxRows);
    f.max_prefill_tokens = *rc::gen::arbitrary<bool>() ? 16384 : edge_value(1, limits::kMaxRows);
    f.tbo = *rc::gen::arbitrary<bool>();
    const bool extend = f.kind == sglang::ForwardKind::extend;
    const int64_t most = extend ? (f.chunked_prefill_size != -1 ? f.chunked_prefill_size : f.max_prefill_tokens)
                                : f.max_running_requests;
    for (int d = 0; d < c.topology.dp; ++d) (extend ? c.tokens : f.requests).push_back(edge_value(0, most));
    if (*rc::gen::arbitrary<bool>()) {
      sglang::CudaGraphs g;
      g.decode = gen_buckets((f.tbo ? 2 : 1) * (sglang::counts_aligned(c) ? c.topology.tp : 1));
      g.prefill = gen_buckets(1);
      if (g.decode.empty() && g.prefill.empty()) g.prefill.push_back(edge_value(1, limits::kMaxRows));
      if (!g.decode.empty() && *rc::gen::arbitrary<bool>()) f.last_decode_bucket = *rc::gen::elementOf(g.decode);
      f.cuda_graph = std::move(g);
    }
    gen_extras(c);
    return c;
  });
}

// Every SGLang case the JSON reader accepts goes JSON -> binary -> JSON unchanged, and its bytes
// are canonical.
RC_GTEST_PROP(CaseBinaryProperty, EverySglangCaseTheJsonReaderAcceptsRoundTrips, ()) {
  const Case drawn = *gen_any_sglang_case();
  const Result<Case> read = case_from_json_text(case_to_json_text(drawn));
  RC_PRE(read.ok());
  RC_ASSERT(*read == drawn);
  const sglang::Forward& f = *sglang::forward_of(drawn);
  RC_TAG(f.chunked_prefill_size != -1 && f.max_prefill_tokens != 16384 ? "chunked, own max_prefill_tokens" : "other");
  const Bytes bytes = case_to_binary(*read);
  const Result<Case> decoded = case_from_fuzz_input(bytes);
  if (!decoded) RC_FAIL(decoded.error().message);
  RC_ASSERT(*decoded == *read);
  RC_ASSERT(case_to_json_text(*decoded) == case_to_json_text(*read));
  RC_ASSERT(case_to_binary(*decoded) == bytes);
}

// Any byte string that decodes re-encodes to a fixed point. Byte edits of valid encodings
// reach far more decodable inputs than uniform bytes; the count keeps the test from passing
// vacuously.
TEST(CaseBinaryStability, EncodeOfDecodeIsAFixedPointOnEditedBytes) {
  std::mt19937_64 rng(50874);
  Case base = design_example();
  base.padding = {PaddingMode::cudagraph, {1, 2, 4, 8, 16}};
  const Bytes seed = case_to_binary(base);
  int decoded_count = 0;
  for (int i = 0; i < 20000; ++i) {
    Bytes bytes = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = 1 + rng() % (bytes.size() - 1);
      switch (rng() % 3) {
        case 0: bytes[at] = static_cast<uint8_t>(rng()); break;
        case 1: bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), static_cast<uint8_t>(rng())); break;
        default: if (bytes.size() > 2) bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(at)); break;
      }
    }
    auto decoded = case_from_binary(bytes);
    if (!decoded) continue;
    ++decoded_count;
    ASSERT_TRUE(validate(*decoded));
    const Bytes once = case_to_binary(*decoded);
    auto again = case_from_binary(once);
    ASSERT_TRUE(again) << again.error().message;
    ASSERT_EQ(*again, *decoded);
    ASSERT_EQ(case_to_binary(*again), once);
  }
  EXPECT_GT(decoded_count, 1000);
}

}  // namespace
}  // namespace r3
