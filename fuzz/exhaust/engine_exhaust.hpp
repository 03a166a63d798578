// What the bounded exhaustive search (case_space.hpp) asks of an engine: its part of the space,
// in its own fixed order, and the bounds that keep that part affordable. `r3fuzz mutants`, which
// decides a mutant's equivalence by this search, asks it besides which implementations carry
// its faults. Each engine implements it in fuzz/engines/NAME/exhaust.cpp and registers it in
// fuzz/engines/registry.cpp; the generic code finds it with engine_exhaust().
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "fuzz/exhaust/bounds.hpp"
#include "fuzz/exhaust/case_space.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/fault.hpp"

namespace r3 {

// A carrier that is no IMPL+FAULT but two released versions of an engine: the older one is the
// fault, historically (fuzz/mutants/carrier.hpp).
struct HistoricalCarrier {
  std::string_view name;    // the carrier's name on the command line ("vllm-pre-50874")
  Fault fault;              // the one fault it carries
  std::string_view mutant;  // the implementation with the bug
  std::string_view base;    // the implementation it must be told apart from
};

class EngineExhaust {
 public:
  virtual ~EngineExhaust() = default;

  // The bounds exhaust takes under the engine's profiles where the command line leaves one unset
  // (max_dp, max_tp, max_tokens and max_m are read): a space searched in seconds.
  virtual ExhaustBounds default_bounds() const = 0;
  // Every unit's shape within the bounds, in the engine's order: topology.dp set, counts empty
  // (UnitStream expands each into the count vectors of its D), the engine's own part in shape.
  virtual std::vector<CaseUnit> unit_shapes(const ExhaustBounds& bounds) const = 0;
  // Calls `visit` on each case of the unit inside bounds.profile, in the engine's order, until
  // it returns false; returns the number visited. The Case passed may be reused between calls.
  virtual int64_t for_each_case(const CaseUnit& unit, const ExhaustBounds& bounds,
                                const std::function<bool(const Case&)>& visit) const = 0;
  // What for_each_case() returns with a visitor that never stops; an engine whose units expand
  // into many cases counts them without visiting each (count_space() calls it once per kind).
  virtual int64_t count_cases(const CaseUnit& unit, const ExhaustBounds& bounds) const {
    return for_each_case(unit, bounds, [](const Case&) { return true; });
  }

  // The bounds of the search that decides a mutant of one of the engine's carriers equivalent.
  virtual ExhaustBounds equivalence_bounds() const = 0;
  // The carriers `r3fuzz mutants` measures by default, in the matrix's order.
  virtual std::vector<std::string_view> carriers() const = 0;
  // The engine's historical carriers (none by default).
  virtual std::vector<HistoricalCarrier> historical_carriers() const { return {}; }
};

// The engine's part, or null when it has none (its cases are then not enumerated).
const EngineExhaust* engine_exhaust(Engine engine);

}  // namespace r3
