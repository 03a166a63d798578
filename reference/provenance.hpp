// Concrete routing values that name their own provenance (the nccl-tests "verifiable"
// habit): every value says which row it came from, so a misplaced row names its token.
//
//   bit 31     0 (values are non-negative; the canary is negative)
//   bits 29-30 kind: 0 untouched buffer row, 1 token, 2 SP padding, 3 placeholder
//   bits 21-28 dp rank (the layer, for an untouched buffer row)
//   bits 6-20  row index (token index, padded row index, or buffer row)
//   bits 0-5   k, the top-k slot
#pragma once

#include <cstdint>
#include <optional>

#include "reference/case.hpp"
#include "reference/rows.hpp"

namespace r3 {

inline constexpr int kProvenanceMaxDp = 255;
inline constexpr int64_t kProvenanceMaxRows = 32767;
inline constexpr int kProvenanceMaxTopK = 64;
inline constexpr int32_t kCanary = -0x35353535;  // guard rows hold this; no routing value is negative

constexpr int32_t encode_value(RowKind kind, int dp_or_layer, int64_t index, int k) {
  const uint32_t code = kind == RowKind::untouched ? 0u : kind == RowKind::token ? 1u
                        : kind == RowKind::sp_padding ? 2u : 3u;
  return static_cast<int32_t>((code << 29) | ((static_cast<uint32_t>(dp_or_layer) & 0xFFu) << 21) |
                              ((static_cast<uint32_t>(index) & 0x7FFFu) << 6) | (static_cast<uint32_t>(k) & 0x3Fu));
}

// Value k of a routing row.
constexpr int32_t routing_value(const RowId& id, int k) { return encode_value(id.kind, id.dp, id.index, k); }

// What buffer row `row` of layer `layer` holds before the step (a stale value from an earlier step).
constexpr int32_t untouched_value(int64_t row, int layer, int k) {
  return encode_value(RowKind::untouched, layer, row, k);
}

// The expert id a monolithic kernel writes for a routing value: ids lie in [0, E).
constexpr int32_t replay_value(int32_t routing, int experts) { return routing % experts; }

struct DecodedValue {
  RowId id;      // for untouched rows, id.dp holds the layer and id.index the buffer row
  int k = 0;
};

std::optional<DecodedValue> decode_value(int32_t value);  // nullopt for the canary and negatives

// True when every value of the case's concrete run can be encoded without ambiguity.
bool provenance_fits(const Case& c);

}  // namespace r3
