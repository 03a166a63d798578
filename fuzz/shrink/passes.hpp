// The shrinker's passes: each proposes smaller variants of a case, most-reducing first.
// Candidates are proposals only; the driver (shrink.cpp) validates and judges them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz/generate/case_domain.hpp"
#include "reference/case.hpp"

namespace r3 {

struct ShrinkPass {
  std::string_view name;
  CasePart part;  // the part of the case domain (fuzz/generate/case_domain.hpp) it reduces
  void (*propose)(const Case& current, std::vector<Case>& out);  // appends candidates
};

// In the order that helps a reader most; together they reduce every part of the case domain,
// each field toward its lowest_value(). The path pass is included only when allowed, since the
// bug signature names the path.
std::vector<ShrinkPass> shrink_passes(bool allow_path_change);

// Values below `value` toward `target`, most-reducing
// first: target, then value minus half the distance, a quarter, ..., then value - 1.
// Empty when value <= target. (5, 0) -> 0, 3, 4; (8, 1) -> 1, 5, 7.
std::vector<int64_t> smaller_values(int64_t value, int64_t target);

// The chunks of a list of `size` entries to try removing, largest first: all of it, halves,
// quarters, ..., single entries, as [begin, end) index pairs.
// (4) -> [0,4) [0,2) [2,4) [0,1) [1,2) [2,3) [3,4).
std::vector<std::pair<size_t, size_t>> removable_chunks(size_t size);

}  // namespace r3
