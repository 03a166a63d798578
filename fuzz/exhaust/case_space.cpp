#include "fuzz/exhaust/case_space.hpp"

#include "fuzz/exhaust/compositions.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "fuzz/generate/case_domain.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3 {
namespace {

using exhaust::compositions;

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

// a * b + c, saturating at INT64_MAX (the counts of huge bounds only need to be "too many").
int64_t saturating_add_product(int64_t c, int64_t a, int64_t b) {
  int64_t product = 0, sum = 0;
  if (__builtin_mul_overflow(a, b, &product) || __builtin_add_overflow(c, product, &sum))
    return std::numeric_limits<int64_t>::max();
  return sum;
}

// Token vectors of length `dp` with every entry in 0..cap and a sum of at most `total`.
int64_t vectors_up_to(int dp, int64_t total, int64_t cap) {
  if (cap < 0) return 0;
  std::vector<int64_t> ways(static_cast<size_t>(total + 1), 0);  // ways[s]: vectors so far summing to s
  ways[0] = 1;
  for (int d = 0; d < dp; ++d) {
    std::vector<int64_t> next(ways.size(), 0);
    for (int64_t s = 0; s <= total; ++s)
      for (int64_t v = 0; v <= cap && s + v <= total; ++v)
        next[static_cast<size_t>(s + v)] = saturating_add_product(next[static_cast<size_t>(s + v)], ways[static_cast<size_t>(s)], 1);
    ways = std::move(next);
  }
  int64_t count = 0;
  for (int64_t w : ways) count = saturating_add_product(count, w, 1);
  return count;
}

}  // namespace

SpaceSize count_space(const ExhaustBounds& bounds) {
  // Counted over the whole space (profile any), where a unit's cases depend on its largest token
  // count alone; a profile's space is a subset, so this is its upper bound.
  ExhaustBounds b = bounds;
  b.profile = Profile::any;
  SpaceSize size;
  const auto wanted = [&](Engine e) { return covers(bounds.profile, e) && (!bounds.engine || *bounds.engine == e); };
  if (wanted(Engine::sglang)) {
    // SGLang's units are few at bounds the search can afford: each is expanded and counted.
    for (const SglangUnit& u : enumerate_sglang_units(b)) {
      size.units = saturating_add_product(size.units, 1, 1);
      size.cases = saturating_add_product(size.cases, for_each_sglang_case(u, b, [](const Case&) { return true; }), 1);
    }
    if (!wanted(Engine::vllm)) return size;
  }
  for (int dp = 1; dp <= b.max_dp; ++dp) {
    for (int tp = 1; tp <= b.max_tp; ++tp) {
      for (const Topology& topology : topologies(dp, tp)) {
        for (int64_t most = 0; most <= std::min(b.max_tokens, b.max_m); ++most) {
          // Units whose largest token count is `most`.
          const int64_t units = vectors_up_to(dp, b.max_tokens, most) - vectors_up_to(dp, b.max_tokens, most - 1);
          if (units == 0) continue;
          CaseUnit unit{topology, std::vector<int64_t>(static_cast<size_t>(dp), 0), std::nullopt};
          unit.tokens[0] = most;
          const int64_t cases = for_each_case(unit, b, [](const Case&) { return true; });
          size.units = saturating_add_product(size.units, units, 1);
          size.cases = saturating_add_product(size.cases, units, cases);
        }
      }
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

std::vector<CaseUnit> enumerate_units(const ExhaustBounds& b) {
  std::vector<CaseUnit> units;
  const auto wanted = [&](Engine e) { return covers(b.profile, e) && (!b.engine || *b.engine == e); };
  auto add_sglang = [&] {
    if (!wanted(Engine::sglang)) return;
    for (SglangUnit& u : enumerate_sglang_units(b)) units.push_back({{}, {}, std::move(u)});
  };
  if (!wanted(Engine::vllm)) {
    add_sglang();
    return units;
  }
  std::vector<int64_t> prefix;
  std::vector<std::vector<int64_t>> vectors;
  for (int dp = 1; dp <= b.max_dp; ++dp) {
    for (int tp = 1; tp <= b.max_tp; ++tp) {
      for (const Topology& topology : topologies(dp, tp)) {
        for (int64_t sum = 0; sum <= b.max_tokens; ++sum) {
          vectors.clear();
          compositions(dp, sum, b.max_m, prefix, vectors);
          for (auto& tokens : vectors) units.push_back({topology, std::move(tokens), std::nullopt});
        }
      }
    }
  }
  add_sglang();
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
