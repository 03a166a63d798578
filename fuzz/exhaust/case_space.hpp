// The bounded case space of `r3fuzz exhaust`, enumerated in one fixed total order so that
// "the smallest counterexample" means the same case on every machine and thread count.
//
// The space is split into units, one per (engine, the engine's shape, count vector); a unit
// expands into its cases. Each engine states its own part of the order (its exhaust part,
// engine_exhaust.hpp, in fuzz/engines/NAME/exhaust.hpp); the generic order, most significant
// first:
//   engine (registry order: those bounds.profile covers, or bounds.engine alone),
//   the engine's shape (for instance D, T and flags), sum of counts, counts (lexicographic),
//   then the engine's own order within the unit.
// A count vector has one entry per DP rank (D = topology.dp), each in 0..max_m, summing to at
// most max_tokens (compositions.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "fuzz/exhaust/bounds.hpp"
#include "fuzz/exhaust/compositions.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/engine_data.hpp"

namespace r3 {

struct CaseUnit {
  Engine engine;                // whose space it lies in: its exhaust part expands it
  Topology topology;            // D (topology.dp) and whatever else of it the engine enumerates
  std::vector<int64_t> counts;  // real tokens per DP rank (or what the engine counts instead)
  EngineData shape = {};        // the engine's own part of the unit's shape, if it has one
};

// The units within the bounds, in the order above, made one at a time: memory does not grow
// with the space, whatever the bounds (count_space() says how many come).
class UnitStream {
 public:
  explicit UnitStream(const ExhaustBounds& bounds);
  // The next unit into `unit`; false when every unit has come.
  bool next(CaseUnit& unit);

 private:
  const ExhaustBounds bounds_;
  std::vector<CaseUnit> shapes_;  // every engine's shapes (EngineExhaust::unit_shapes), counts empty
  size_t shape_ = 0;
  std::optional<exhaust::CountVectors> counts_;  // the current shape's
};

// Every unit at once, in the same order: for small bounds (tests).
std::vector<CaseUnit> enumerate_units(const ExhaustBounds& bounds);

// How many units and cases (valid or not) the bounds enumerate, computed without listing them:
// a unit's case count depends only on its shape and its largest count, so units are counted by
// that (a small dynamic programme) and one unit of each kind is counted (EngineExhaust::
// count_cases). Exact for profile any; for a profile, whose cases are a subset, an upper bound
// (an engine's filters may depend on every count). Allocates nothing that grows with the
// space. Saturates at INT64_MAX.
struct SpaceSize {
  int64_t units = 0;
  int64_t cases = 0;
};
SpaceSize count_space(const ExhaustBounds& bounds);

// Calls `visit` on each case of the unit, in order, until it returns false. Returns the number
// of cases visited (none for an engine without an exhaust part). The Case passed is reused
// between calls.
int64_t for_each_case(const CaseUnit& unit, const ExhaustBounds& bounds, const std::function<bool(const Case&)>& visit);

}  // namespace r3
