#include "reference/provenance.hpp"

#include <algorithm>

#include "reference/engine_model.hpp"

namespace r3 {

std::optional<DecodedValue> decode_value(int32_t value) {
  if (value < 0) return std::nullopt;
  const auto v = static_cast<uint32_t>(value);
  static constexpr RowKind kinds[] = {RowKind::untouched, RowKind::token, RowKind::sp_padding, RowKind::placeholder};
  DecodedValue out;
  out.id.kind = kinds[(v >> 29) & 3u];
  out.id.dp = static_cast<int>((v >> 21) & 0xFFu);
  out.id.index = static_cast<int64_t>((v >> 6) & 0x7FFFu);
  out.k = static_cast<int>(v & 0x3Fu);
  return out;
}

bool provenance_fits(const Case& c) {
  // A token's index is below its rank's padded rows, themselves below the largest buffer.
  const int64_t most = c.engine.model().most_buffer_rows(c);
  return c.topology.dp <= kProvenanceMaxDp && most <= kProvenanceMaxRows && c.model.top_k <= kProvenanceMaxTopK &&
         c.model.layers <= 256;
}

}  // namespace r3
