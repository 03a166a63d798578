#include "reference/trace/route.hpp"

#include <algorithm>

namespace r3 {

std::vector<uint64_t> prefix_hashes(std::span<const int32_t> tokens) {
  std::vector<uint64_t> out;
  out.reserve(tokens.size());
  uint64_t h = kPrefixHashBasis;
  for (const int32_t token : tokens) {
    h = extend_prefix_hash(h, token);
    out.push_back(h);
  }
  return out;
}

std::vector<int32_t> route_experts(uint64_t prefix_hash, int layer, int version, int top_k, int experts) {
  std::vector<int32_t> picked;
  picked.reserve(static_cast<size_t>(top_k));
  for (int k = 0; k < top_k; ++k) {
    const uint64_t h = route_mix(prefix_hash ^ (static_cast<uint64_t>(layer) << 40) ^
                                 (static_cast<uint64_t>(version) << 48) ^ (static_cast<uint64_t>(k) << 56));
    auto e = static_cast<int32_t>(h % static_cast<uint64_t>(experts));
    // Distinct experts, as a router's top-k is: step past the ones already picked.
    while (std::find(picked.begin(), picked.end(), e) != picked.end()) e = (e + 1) % experts;
    picked.push_back(e);
  }
  return picked;
}

std::string describe(const RouteRef& ref) {
  switch (ref.kind) {
    case RouteRef::Kind::route:
      return "the route of request " + std::to_string(ref.req) + " position " + std::to_string(ref.pos) +
             " at weight version " + std::to_string(ref.version);
    case RouteRef::Kind::draft:
      return "a rejected draft row of request " + std::to_string(ref.req) + " position " + std::to_string(ref.pos);
    case RouteRef::Kind::padding: return "a padding row";
    case RouteRef::Kind::never_written: return "a row nothing wrote (zeros)";
  }
  return "?";
}

}  // namespace r3
