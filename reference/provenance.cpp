#include "reference/provenance.hpp"

#include <algorithm>

#include "reference/engines/sglang/policy.hpp"
#include "reference/layout.hpp"

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
  if (c.engine == Engine::sglang) {
    // A token's index is below its rank's padded batch, itself below the buffer the case sizes.
    const int64_t rows = std::max(sglang::buffer_rows(c, sglang::Version::upstream),
                                  sglang::buffer_rows(c, sglang::Version::fixed));
    return c.topology.dp <= kProvenanceMaxDp && rows <= kProvenanceMaxRows && c.model.top_k <= kProvenanceMaxTopK &&
           c.model.layers <= 256;
  }
  int64_t most = c.max_num_tokens;
  for (int64_t n : derive_num_tokens_across_dp(c)) most = std::max(most, c.topology.tp * ceil_div(n, c.topology.tp));
  return c.topology.dp <= kProvenanceMaxDp && most <= kProvenanceMaxRows && c.model.top_k <= kProvenanceMaxTopK &&
         c.model.layers <= 256;
}

}  // namespace r3
