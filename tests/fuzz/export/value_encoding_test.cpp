// The values an exported test gives its rows: one-to-one, inside int32, and disjoint from every
// id a capturer can hold without copying it from a tensor the test handed it (expert ids, the
// fused shared experts' ids, fill values), for every size the case format allows.
#include "fuzz/export/value_encoding.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "reference/limits.hpp"

namespace r3 {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr RowKind kKinds[] = {RowKind::untouched, RowKind::token, RowKind::sp_padding, RowKind::placeholder};

// Whether every value fits int32 (what value_encoding must decide), computed exactly: within the
// sizes below (span_a <= 2^10, rows and slots <= 2^40 + 1, top_k <= 2^6) every product stays under 2^60.
bool fits_int32(const EncodedStep& s) {
  const int64_t span_a = std::max(s.dp, s.layers);
  const int64_t highest = s.experts + kFusedSharedExperts + kRowKindCodes * span_a * s.row_span * s.top_k - 1;
  const int64_t lowest_host = -(s.host_slots * s.layers * s.top_k);
  return highest <= kInt32Max && lowest_host >= kInt32Min;
}

// The ids a capturer can hold of its own accord: the fill value -1, 0 and every expert id.
int64_t highest_legitimate_id(const EncodedStep& s) { return s.experts + kFusedSharedExperts - 1; }

// The disjointness argument, checked: the lowest value lies above every legitimate id and the
// highest fits int32; host-cache values lie below every legitimate id and fit int32.
void expect_disjoint(const EncodedStep& s, const ValueEncoding& e) {
  EXPECT_GT(e.value(RowKind::untouched, 0, 0, 0), highest_legitimate_id(s));
  EXPECT_EQ(e.value(RowKind::untouched, 0, 0, 0), e.base);
  const int64_t highest = e.value(RowKind::placeholder, e.span_a - 1, e.span_r - 1, e.top_k - 1);
  EXPECT_EQ(highest, e.end() - 1);
  EXPECT_LE(highest, kInt32Max);
  EXPECT_EQ(e.stale_host_value(0, 0, 0), -1);  // the highest host value: below every row's
  if (e.host_slots > 0) {
    EXPECT_EQ(e.stale_host_value(e.host_slots - 1, e.layers - 1, e.top_k - 1), e.lowest_host_value());
    EXPECT_GE(e.lowest_host_value(), kInt32Min);
  }
}

TEST(ValueEncoding, EveryValueOfASmallStepIsDistinctAndAboveEveryId) {
  for (int64_t experts : {1, 2, 6, 7}) {
    for (int64_t top_k : {1, 2, 3}) {
      for (int64_t dp : {1, 2, 3}) {
        for (int64_t layers : {1, 2}) {
          for (int64_t rows : {1, 2, 5}) {
            const EncodedStep s{experts, dp, layers, top_k, rows, rows + 1};
            auto e = value_encoding(s);
            ASSERT_TRUE(e.ok()) << e.error().message;
            std::set<int64_t> seen;
            for (RowKind kind : kKinds)
              for (int64_t a = 0; a < e->span_a; ++a)
                for (int64_t index = 0; index < e->span_r; ++index)
                  for (int64_t k = 0; k < top_k; ++k) {
                    const int64_t v = e->value(kind, a, index, k);
                    EXPECT_TRUE(seen.insert(v).second) << "two rows share the value " << v;
                    EXPECT_GE(v, e->base);
                    EXPECT_LT(v, e->end());
                    // Above every expert id, the shared experts' (E .. base - 1) and the fill values.
                    EXPECT_GT(v, experts + kFusedSharedExperts - 1);
                    EXPECT_GT(v, kLowestFillValue);
                  }
            EXPECT_EQ(static_cast<int64_t>(seen.size()), e->end() - e->base);  // every value in [base, end) used once
            for (int64_t slot = 0; slot < s.host_slots; ++slot)
              for (int64_t layer = 0; layer < layers; ++layer)
                for (int64_t k = 0; k < top_k; ++k) {
                  const int64_t v = e->stale_host_value(slot, layer, k);
                  EXPECT_TRUE(seen.insert(v).second) << "a stale host value is also a row's: " << v;
                  EXPECT_LT(v, 0);
                }
            expect_disjoint(s, *e);
          }
        }
      }
    }
  }
}

// The case: SGLang, K = 1, one DP rank of two layers, 3 rows, and "experts" set to what
// the first token's value was before the base (6): the shared expert's id must not be a token's.
TEST(ValueEncoding, TheSharedExpertsIdIsNoTokensValue) {
  for (int64_t experts = 1; experts <= 64; ++experts) {
    auto e = value_encoding({experts, 1, 2, 1, 3, 4});
    ASSERT_TRUE(e.ok());
    for (int64_t d = 0; d < e->span_a; ++d)
      for (int64_t j = 0; j < e->span_r; ++j) {
        EXPECT_NE(e->value(RowKind::token, d, j, 0), experts);  // the shared expert's id
        EXPECT_GT(e->value(RowKind::token, d, j, 0), experts);
      }
  }
  EXPECT_EQ(value_encoding({6, 1, 2, 1, 3, 4})->value(RowKind::token, 0, 0, 0), 13);  // 7 + (1 * 2 + 0) * 3 * 1
}

// Every size the format allows, its corners included: accepted exactly when every value fits
// int32, and then disjoint from every legitimate id.
TEST(ValueEncoding, AcceptedExactlyWhenEveryValueFitsInt32AtTheLimits) {
  const std::vector<int64_t> experts = {1, 2, 255, 256, limits::kMaxExpertsInInt16, limits::kMaxExperts - 1,
                                        limits::kMaxExperts};
  const std::vector<int64_t> top_ks = {1, 2, 8, limits::kMaxTopK};
  const std::vector<int64_t> spans = {1, 2, 7, 64, limits::kMaxDp, limits::kMaxLayers};
  const std::vector<int64_t> rows = {1, 2, 1000, int64_t{1} << 16, limits::kMaxRows, limits::kMaxRows * limits::kMaxDp,
                                     limits::kMaxRows * limits::kMaxDp * limits::kMaxTp};
  int accepted = 0, refused = 0;
  for (int64_t e_count : experts)
    for (int64_t k : top_ks)
      for (int64_t dp : spans)
        for (int64_t layers : spans)
          for (int64_t r : rows)
            for (int64_t slots : {int64_t{0}, int64_t{1}, r + 1}) {
              const EncodedStep s{e_count, dp, layers, k, r, slots};
              auto e = value_encoding(s);
              ASSERT_EQ(e.ok(), fits_int32(s)) << "E " << e_count << " K " << k << " dp " << dp << " layers " << layers
                                               << " rows " << r << " slots " << slots;
              if (!e.ok()) {
                ++refused;
                continue;
              }
              ++accepted;
              expect_disjoint(s, *e);
            }
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 1000);
}

// The boundary itself: the largest span of rows that fits is accepted, one more row is refused.
TEST(ValueEncoding, TheLargestStepThatFitsIsAcceptedAndOneRowMoreIsRefused) {
  for (int64_t experts : {int64_t{1}, int64_t{256}, int64_t{limits::kMaxExperts}}) {
    for (int64_t k : {1, 8, 64}) {
      const int64_t span_a = 1024;
      const int64_t most = (kInt32Max + 1 - (experts + kFusedSharedExperts)) / (kRowKindCodes * span_a * k);
      auto fits = value_encoding({experts, span_a, 4, k, most, 0});
      ASSERT_TRUE(fits.ok()) << fits.error().message;
      EXPECT_LE(fits->end() - 1, kInt32Max);
      EXPECT_GT(fits->end() - 1 + kRowKindCodes * span_a * k, kInt32Max);
      EXPECT_FALSE(value_encoding({experts, span_a, 4, k, most + 1, 0}).ok());
    }
  }
  const int64_t slots = (int64_t{1} << 31) / (1024 * 64);
  EXPECT_TRUE(value_encoding({8, 1, 1024, 64, 1, slots}).ok());
  EXPECT_EQ(value_encoding({8, 1, 1024, 64, 1, slots + 1}).error().message,
            "the step has 32769 host-cache slots across 1024 layers and top_k 64: too many to give every slot its own "
            "int32 value (the host cache is int32)");
}

TEST(ValueEncoding, TheRefusalNamesTheRowsRanksTopKAndTheExpertIds) {
  EXPECT_EQ(value_encoding({64, 2, 1, 64, int64_t{1} << 24, 0}).error().message,
            "the step has 16777216 rows across 2 ranks or layers and top_k 64: too many to give every row its own "
            "int32 value above the 65 expert ids (the buffer is int32)");
}

}  // namespace
}  // namespace r3
