// The route hash of docs/TRACES.md ("The truth") in Python, as every exported trace test embeds
// it: the same function as reference/trace/route.hpp, bit for bit (64-bit arithmetic masked,
// tokens taken as uint32), so an engine team recomputes the truth without r3fuzz.
// tests/examples/exported_trace_pytest_test.cpp checks exact values against the C++.
#pragma once

#include <string_view>

namespace r3 {

inline constexpr std::string_view kRoutePython = R"PY(
MASK64 = (1 << 64) - 1
PREFIX_HASH_BASIS = 0xCBF29CE484222325


def route_mix(x):
    """splitmix64's finaliser."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def prefix_hashes(tokens):
    """h(p) for every position p of tokens: h(-1) = PREFIX_HASH_BASIS, h(p) = mix(h(p-1) ^ uint32 token)."""
    out, h = [], PREFIX_HASH_BASIS
    for token in tokens:
        h = route_mix(h ^ (token & 0xFFFFFFFF))
        out.append(h)
    return out


def route_experts(prefix_hash, layer, version, top_k, experts):
    """The K distinct expert ids of one layer: mix(h ^ l << 40 ^ v << 48 ^ k << 56) % E, stepping past repeats."""
    picked = []
    for k in range(top_k):
        e = route_mix(prefix_hash ^ ((layer << 40) & MASK64) ^ ((version << 48) & MASK64) ^ ((k << 56) & MASK64)) % experts
        while e in picked:
            e = (e + 1) % experts
        picked.append(e)
    return picked
)PY";

}  // namespace r3
