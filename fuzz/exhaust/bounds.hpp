// The bounds of an exhaustive search: which part of the case space `r3fuzz exhaust` enumerates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "reference/error.hpp"
#include "reference/profile.hpp"

namespace r3 {

// The defaults are the default engine's (its exhaust part's default_bounds(), engine_exhaust.hpp).
struct ExhaustBounds {
  int max_dp = 4;          // D in 1..max_dp
  int max_tp = 4;          // T in 1..max_tp
  int64_t max_tokens = 9;  // sum of real tokens over DP ranks in 0..max_tokens
  int64_t max_m = 9;       // M in max(1, max real tokens)..max_m
  int layers = 2;          // L (layer 0 and layer L-1 are both enumerated)
  int top_k = 1;           // K
  int experts = 4;         // E
  Profile profile = kDefaultProfile;  // only cases inside it are enumerated
  std::optional<Engine> engine = std::nullopt;  // under profile any: only this engine's cases (nullopt: every engine's)
};

// Ok when every bound is in a range the enumeration can afford; the error names the flag.
Status validate(const ExhaustBounds& b);

// One line a reader can paste into a claim: "D<=4 T<=4 sum(tokens)<=6 M<=6 L=2 K=1 E=4".
std::string describe(const ExhaustBounds& b);

}  // namespace r3
