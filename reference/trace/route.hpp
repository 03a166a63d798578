// The truth of a trace (docs/TRACES.md, "The route"): the route of a request at absolute
// position p is a function of the token prefix [0..p], the layer and the weight version of the
// forward that computed the KV the request uses at p, and of nothing else. Here it is a hash
// that the reference, the engine models and the exported pytests compute alike:
//
//   prefix hash  h(-1) = 0xcbf29ce484222325 (FNV-1a offset basis)
//                h(p)  = mix(h(p-1) ^ (uint32 token[p]))               mix = splitmix64's finaliser
//   route        expert k of layer l: e = mix(h(p) ^ (l << 40) ^ (v << 48) ^ (k << 56)) % E,
//                 stepping on by one (mod E) past an expert already picked, so the K are distinct.
//
// The models never carry route values: each row they return names where its value came from
// (RouteRef), and two refs are the same route when their prefix hashes and versions agree.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace r3 {

inline constexpr uint64_t kPrefixHashBasis = 0xcbf29ce484222325ull;

constexpr uint64_t route_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
constexpr uint64_t extend_prefix_hash(uint64_t previous, int32_t token) {
  return route_mix(previous ^ static_cast<uint32_t>(token));
}

// The prefix hash of every position of `tokens`.
std::vector<uint64_t> prefix_hashes(std::span<const int32_t> tokens);

// The K expert ids of one layer of the route at (prefix hash, version); requires K <= E.
std::vector<int32_t> route_experts(uint64_t prefix_hash, int layer, int version, int top_k, int experts);

// Where a returned row's value came from.
struct RouteRef {
  enum class Kind : uint8_t {
    route,          // the route of request `req` at `pos`, computed at weight `version`
    draft,          // a spec-decode draft row that the verify rejected (`req`, `pos`, `version`)
    padding,        // a CUDA-graph or DP padding row
    never_written,  // a row nobody wrote: the buffer's initial zeros
  };
  Kind kind = Kind::never_written;
  int req = -1;
  int64_t pos = -1;
  int version = 0;
  bool operator==(const RouteRef&) const = default;
};

// "request 0 position 4 at weight version 0", "a padding row", ...
std::string describe(const RouteRef& ref);

}  // namespace r3
