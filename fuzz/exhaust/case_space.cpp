#include "fuzz/exhaust/case_space.hpp"

#include <algorithm>

#include "fuzz/exhaust/engine_exhaust.hpp"
#include "reference/profile.hpp"

namespace r3 {
namespace {

bool wanted(const ExhaustBounds& b, Engine e) { return covers(b.profile, e) && (!b.engine || *b.engine == e); }

// Every unit's shape (its counts left empty) in the order of the space: each wanted engine's in
// registry order, an engine without an exhaust part contributing none.
std::vector<CaseUnit> unit_shapes(const ExhaustBounds& b) {
  std::vector<CaseUnit> shapes;
  for (Engine e : all_engines()) {
    const EngineExhaust* space = engine_exhaust(e);
    if (!space || !wanted(b, e)) continue;
    for (CaseUnit& u : space->unit_shapes(b)) {
      u.engine = e;
      shapes.push_back(std::move(u));
    }
  }
  return shapes;
}

}  // namespace

SpaceSize count_space(const ExhaustBounds& bounds) {
  // Counted over the whole space (profile any), where a unit's cases depend on its largest count
  // alone; a profile's space is a subset, so this is its upper bound.
  ExhaustBounds b = bounds;
  b.profile = Profile::any();
  const int64_t most_counted = std::min(b.max_tokens, b.max_m);
  // by_largest[dp][m]: the count vectors of dp ranks whose largest entry is m (shared by shapes).
  std::vector<std::vector<int64_t>> by_largest(static_cast<size_t>(b.max_dp + 1));
  for (int dp = 1; dp <= b.max_dp; ++dp) by_largest[static_cast<size_t>(dp)] = exhaust::count_vectors_by_largest(dp, b.max_tokens, b.max_m);
  SpaceSize size;
  for (CaseUnit unit : unit_shapes(bounds)) {
    const EngineExhaust& space = *engine_exhaust(unit.engine);  // unit_shapes() made it
    const int dp = unit.topology.dp;
    for (int64_t most = 0; most <= most_counted; ++most) {
      const int64_t units = by_largest[static_cast<size_t>(dp)][static_cast<size_t>(most)];
      if (units == 0) continue;
      // One unit of those: its largest count first, the others idle.
      unit.counts.assign(static_cast<size_t>(dp), 0);
      unit.counts[0] = most;
      const int64_t cases = space.count_cases(unit, b);
      size.units = exhaust::saturating_add_product(size.units, units, 1);
      size.cases = exhaust::saturating_add_product(size.cases, units, cases);
    }
  }
  return size;
}

UnitStream::UnitStream(const ExhaustBounds& bounds) : bounds_(bounds), shapes_(unit_shapes(bounds)) {}

bool UnitStream::next(CaseUnit& unit) {
  while (shape_ < shapes_.size()) {
    const CaseUnit& shape = shapes_[shape_];
    if (!counts_) counts_.emplace(shape.topology.dp, bounds_.max_tokens, bounds_.max_m);
    if (counts_->done()) {
      counts_.reset();
      ++shape_;
      continue;
    }
    unit = shape;
    unit.counts = **counts_;
    counts_->next();
    return true;
  }
  return false;
}

std::vector<CaseUnit> enumerate_units(const ExhaustBounds& b) {
  std::vector<CaseUnit> units;
  UnitStream stream(b);
  for (CaseUnit unit; stream.next(unit);) units.push_back(unit);
  return units;
}

int64_t for_each_case(const CaseUnit& unit, const ExhaustBounds& b, const std::function<bool(const Case&)>& visit) {
  const EngineExhaust* space = engine_exhaust(unit.engine);
  return space ? space->for_each_case(unit, b, visit) : 0;
}

}  // namespace r3
