#include "reference/engines/sglang/forward.hpp"

#include <string>

namespace r3::sglang {

std::string_view to_string(A2a a2a) {
  switch (a2a) {
    case A2a::none: return "none";
    case A2a::deepep: return "deepep";
    case A2a::mooncake: return "mooncake";
    case A2a::nixl: return "nixl";
    case A2a::mori: return "mori";
    case A2a::flashinfer: return "flashinfer";
    case A2a::megamoe: return "megamoe";
    case A2a::pplx: return "pplx";
    case A2a::ascend_fuseep: return "ascend_fuseep";
  }
  return "?";
}

Result<A2a> parse_a2a(std::string_view text) {
  for (int i = 0; i < kA2aCount; ++i)
    if (text == to_string(static_cast<A2a>(i))) return static_cast<A2a>(i);
  return Error{"topology.a2a: \"" + std::string(text) + "\" is not one of " + std::string(kA2aNames)};
}

std::string_view to_string(ForwardKind kind) {
  switch (kind) {
    case ForwardKind::extend: return "extend";
    case ForwardKind::decode: return "decode";
    case ForwardKind::verify: return "verify";
  }
  return "?";
}

Result<ForwardKind> parse_forward_kind(std::string_view text) {
  for (ForwardKind k : {ForwardKind::extend, ForwardKind::decode, ForwardKind::verify})
    if (text == to_string(k)) return k;
  return Error{"forward: \"" + std::string(text) + "\" is not one of extend, decode, verify"};
}

}  // namespace r3::sglang
