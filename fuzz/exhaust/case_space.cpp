#include "fuzz/exhaust/case_space.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "fuzz/generate/case_domain.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3 {
namespace {

constexpr int kMaxMicrobatches = 4;

std::vector<Topology> topologies(int dp, int tp) {
  std::vector<Topology> out{{dp, tp, false, false}, {dp, tp, true, false}};
  if (dp > 1 && tp > 1) out.push_back({dp, tp, true, true});
  return out;
}

std::vector<Path> paths(const Topology& t) {
  if (t.dp == 1) return {Path::single};
  return {Path::gathered, t.sp ? Path::sp_shard : Path::local};
}

bool wanted(const ExhaustBounds& b, Engine e) { return covers(b.profile, e) && (!b.engine || *b.engine == e); }

// Every unit's shape (its counts left empty) in the order of the space: vLLM's, then SGLang's.
std::vector<CaseUnit> unit_shapes(const ExhaustBounds& b) {
  std::vector<CaseUnit> shapes;
  if (wanted(b, Engine::vllm)) {
    for (int dp = 1; dp <= b.max_dp; ++dp)
      for (int tp = 1; tp <= b.max_tp; ++tp)
        for (const Topology& topology : topologies(dp, tp)) shapes.push_back({topology, {}, std::nullopt});
  }
  if (wanted(b, Engine::sglang)) {
    for (SglangUnit& u : sglang_unit_shapes(b)) shapes.push_back({{}, {}, std::move(u)});
  }
  return shapes;
}

int dp_of(const CaseUnit& u) { return u.sglang ? u.sglang->dp : u.topology.dp; }

}  // namespace

SpaceSize count_space(const ExhaustBounds& bounds) {
  // Counted over the whole space (profile any), where a unit's cases depend on its largest count
  // alone; a profile's space is a subset, so this is its upper bound.
  ExhaustBounds b = bounds;
  b.profile = Profile::any;
  const int64_t most_counted = std::min(b.max_tokens, b.max_m);
  // by_largest[dp][m]: the count vectors of dp ranks whose largest entry is m (shared by shapes).
  std::vector<std::vector<int64_t>> by_largest(static_cast<size_t>(b.max_dp + 1));
  for (int dp = 1; dp <= b.max_dp; ++dp) by_largest[static_cast<size_t>(dp)] = exhaust::count_vectors_by_largest(dp, b.max_tokens, b.max_m);
  SpaceSize size;
  for (CaseUnit unit : unit_shapes(bounds)) {
    const int dp = dp_of(unit);
    for (int64_t most = 0; most <= most_counted; ++most) {
      const int64_t units = by_largest[static_cast<size_t>(dp)][static_cast<size_t>(most)];
      if (units == 0) continue;
      // One unit of those: its largest count first, the others idle.
      std::vector<int64_t>& counts = unit.sglang ? unit.sglang->counts : unit.tokens;
      counts.assign(static_cast<size_t>(dp), 0);
      counts[0] = most;
      const int64_t cases = unit.sglang ? count_sglang_cases(*unit.sglang, b) : for_each_case(unit, b, [](const Case&) { return true; });
      size.units = exhaust::saturating_add_product(size.units, units, 1);
      size.cases = exhaust::saturating_add_product(size.cases, units, cases);
    }
  }
  return size;
}

Padding padding_variant(int index, int64_t max_num_tokens) {
  switch (index) {
    case 0: return {PaddingMode::none, {}};
    case 1: return {PaddingMode::dp_max, {}};
    case 2: return {PaddingMode::cudagraph, {1}};
    case 3: {
      Padding p{PaddingMode::cudagraph, {2}};
      while (p.cudagraph_sizes.back() < max_num_tokens) p.cudagraph_sizes.push_back(2 * p.cudagraph_sizes.back());
      return p;
    }
    default: return {PaddingMode::cudagraph, {max_num_tokens + 1}};
  }
}

UnitStream::UnitStream(const ExhaustBounds& bounds) : bounds_(bounds), shapes_(unit_shapes(bounds)) {}

bool UnitStream::next(CaseUnit& unit) {
  while (shape_ < shapes_.size()) {
    const CaseUnit& shape = shapes_[shape_];
    if (!counts_) counts_.emplace(dp_of(shape), bounds_.max_tokens, bounds_.max_m);
    if (counts_->done()) {
      counts_.reset();
      ++shape_;
      continue;
    }
    unit = shape;
    (unit.sglang ? unit.sglang->counts : unit.tokens) = **counts_;
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
  if (unit.sglang) return for_each_sglang_case(*unit.sglang, b, visit);
  Case c;
  c.topology = unit.topology;
  c.model = {b.layers, b.top_k, b.experts};
  c.tokens = unit.tokens;
  const int64_t most_tokens = *std::max_element(unit.tokens.begin(), unit.tokens.end());
  std::vector<int> layers{0};
  if (b.layers > 1) layers.push_back(b.layers - 1);
  // idle_dummy only matters when D > 1; a vLLM profile requires it there.
  std::vector<bool> dummies{false};
  if (unit.topology.dp > 1) dummies = b.profile == Profile::any ? std::vector<bool>{false, true} : std::vector<bool>{true};
  int64_t visited = 0;
  auto emit = [&]() {
    for (bool dummy : dummies) {
      c.idle_dummy = dummy;
      if (!in_profile(c, b.profile)) continue;
      for (int layer : layers) {
        c.layer = layer;
        ++visited;
        if (!visit(c)) return false;
      }
    }
    return true;
  };
  for (int64_t m = std::max<int64_t>(1, most_tokens); m <= b.max_m; ++m) {
    c.max_num_tokens = m;
    for (Path path : paths(c.topology)) {
      c.path = path;
      const bool modular = path == Path::local || path == Path::sp_shard;
      for (int pad = 0; pad < kPaddingVariants; ++pad) {
        c.padding = padding_variant(pad, m);
        for (bool monolithic : {false, true}) {
          if (monolithic && modular) continue;
          c.monolithic = monolithic;
          const int most_u = can_microbatch(c) ? kMaxMicrobatches : 1;
          for (int u = 1; u <= most_u; ++u) {
            c.microbatches = u;
            c.dp_chunk.reset();
            if (!emit()) return visited;
            if (!modular || u > 1) continue;
            c.idle_dummy = dummies.back();  // the larger counts: C covers every chunking of both
            const int64_t most_c = most_rows_to_chunk(c) + 1;
            for (int64_t chunk = 1; chunk <= most_c; ++chunk) {
              c.dp_chunk = chunk;
              if (!emit()) return visited;
            }
          }
        }
      }
    }
  }
  return visited;
}

}  // namespace r3
