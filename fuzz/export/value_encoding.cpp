#include "fuzz/export/value_encoding.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace r3 {

int64_t row_kind_code(RowKind kind) {
  switch (kind) {
    case RowKind::untouched: return 0;
    case RowKind::token: return 1;
    case RowKind::sp_padding: return 2;
    case RowKind::placeholder: return 3;
  }
  return 0;
}

Result<ValueEncoding> value_encoding(const EncodedStep& s) {
  ValueEncoding e;
  e.base = s.experts + kFusedSharedExperts;
  e.span_a = std::max(s.dp, s.layers);
  e.span_r = s.row_span;
  e.top_k = s.top_k;
  e.layers = s.layers;
  e.host_slots = s.host_slots;
  // end() - 1 <= INT32_MAX, i.e. kRowKindCodes * span_a * span_r * top_k <= 2^31 - base; divided
  // first, so nothing here can overflow whatever the spans.
  const int64_t room = int64_t{std::numeric_limits<int32_t>::max()} + 1 - e.base;
  if (e.span_r > room / (kRowKindCodes * e.span_a * e.top_k)) {
    return Error{"the step has " + std::to_string(e.span_r) + " rows across " + std::to_string(e.span_a) +
                 " ranks or layers and top_k " + std::to_string(e.top_k) +
                 ": too many to give every row its own int32 value above the " + std::to_string(e.base) +
                 " expert ids (the buffer is int32)"};
  }
  // lowest_host_value() >= INT32_MIN, i.e. host_slots * layers * top_k <= 2^31.
  const int64_t host_room = -int64_t{std::numeric_limits<int32_t>::min()};
  if (e.host_slots > host_room / (e.layers * e.top_k)) {
    return Error{"the step has " + std::to_string(e.host_slots) + " host-cache slots across " +
                 std::to_string(e.layers) + " layers and top_k " + std::to_string(e.top_k) +
                 ": too many to give every slot its own int32 value (the host cache is int32)"};
  }
  return e;
}

}  // namespace r3
