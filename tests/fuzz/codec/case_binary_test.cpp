#include "fuzz/codec/case_binary.hpp"

#include <random>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

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
  EXPECT_EQ(error_of({3, 0, 0}), "binary case: version 3 is not supported (expected 1 for vLLM or 2 for SGLang)");
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
