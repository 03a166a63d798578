#include "reference/provenance.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

TEST(Provenance, ValuesNameTheirRow) {
  const int32_t v = routing_value({RowKind::token, 3, 1234}, 7);
  const auto decoded = decode_value(v);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->id, (RowId{RowKind::token, 3, 1234}));
  EXPECT_EQ(decoded->k, 7);
  EXPECT_GE(v, 0);
}

TEST(Provenance, UntouchedRowsCarryTheLayer) {
  const auto decoded = decode_value(untouched_value(9, 2, 1));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->id, (RowId{RowKind::untouched, 2, 9}));
}

TEST(Provenance, TheCanaryDecodesToNothing) {
  EXPECT_FALSE(decode_value(kCanary));
  EXPECT_FALSE(decode_value(-1));
}

TEST(Provenance, ReplayValuesAreExpertIds) {
  EXPECT_EQ(replay_value(routing_value({RowKind::token, 0, 1}, 5), 64), 5);  // k sits in the low bits
  EXPECT_LT(replay_value(routing_value({RowKind::token, 200, 32767}, 63), 256), 256);
}

TEST(Provenance, FitsOnlySmallCases) {
  Case c = test::make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered);
  EXPECT_TRUE(provenance_fits(c));
  EXPECT_TRUE(provenance_fits(test::vllm_50874_deployment()));
  c.max_num_tokens = 32768;
  EXPECT_FALSE(provenance_fits(c));
  c.max_num_tokens = 8;
  c.model.layers = 257;
  c.layer = 0;
  EXPECT_FALSE(provenance_fits(c));
}

RC_GTEST_PROP(ProvenanceProperty, EncodeDecodeRoundTrips, ()) {
  const auto kind = *rc::gen::element(RowKind::untouched, RowKind::token, RowKind::sp_padding, RowKind::placeholder);
  const int dp = *rc::gen::inRange(0, kProvenanceMaxDp + 1);
  const int64_t index = *rc::gen::inRange<int64_t>(0, kProvenanceMaxRows + 1);
  const int k = *rc::gen::inRange(0, kProvenanceMaxTopK);
  const auto decoded = decode_value(encode_value(kind, dp, index, k));
  RC_ASSERT(decoded.has_value());
  RC_ASSERT(decoded->id == (RowId{kind, dp, index}));
  RC_ASSERT(decoded->k == k);
}

}  // namespace
}  // namespace r3
