// vLLM's exhaustive space (exhaust.hpp states its order) and its carriers for `r3fuzz mutants`.
#include "fuzz/engines/vllm/exhaust.hpp"

#include <algorithm>

#include "fuzz/engines/vllm/parts.hpp"
#include "fuzz/generate/case_domain.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3::vllm {
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

class VllmExhaust final : public EngineExhaust {
 public:
  ExhaustBounds default_bounds() const override { return {.max_dp = 4, .max_tp = 4, .max_tokens = 9, .max_m = 9}; }

  std::vector<CaseUnit> unit_shapes(const ExhaustBounds& b) const override {
    std::vector<CaseUnit> shapes;
    for (int dp = 1; dp <= b.max_dp; ++dp)
      for (int tp = 1; tp <= b.max_tp; ++tp)
        for (const Topology& topology : topologies(dp, tp)) shapes.push_back({engine(), topology, {}, {}});
    return shapes;
  }

  int64_t for_each_case(const CaseUnit& unit, const ExhaustBounds& b,
                        const std::function<bool(const Case&)>& visit) const override {
    Case c;
    c.topology = unit.topology;
    c.model = {b.layers, b.top_k, b.experts};
    c.tokens = unit.counts;
    const int64_t most_tokens = *std::max_element(unit.counts.begin(), unit.counts.end());
    std::vector<int> layers{0};
    if (b.layers > 1) layers.push_back(b.layers - 1);
    // idle_dummy only matters when D > 1; a vLLM profile requires it there.
    std::vector<bool> dummies{false};
    if (unit.topology.dp > 1) dummies = b.profile.is_any() ? std::vector<bool>{false, true} : std::vector<bool>{true};
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

  // Wide experts, so that narrow-int16 can show.
  ExhaustBounds equivalence_bounds() const override { return {3, 3, 5, 5, 2, 1, 65536}; }

  // r3-fixed (every vLLM fault), the historical vllm-pre-50874 (replay-per-rank only), and the
  // GPU pipeline (every vLLM fault, when registered).
  std::vector<std::string_view> carriers() const override { return {"r3-fixed", "vllm-pre-50874", "gpu"}; }

  // vLLM before PR #50874 against vLLM after it: replay-per-rank on the policy side (with the old
  // capture decision besides).
  std::vector<HistoricalCarrier> historical_carriers() const override {
    return {{"vllm-pre-50874", Fault::replay_per_rank, "vllm-pre-50874", "vllm-50874"}};
  }
};

}  // namespace

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

const EngineExhaust& exhaust_part() {
  static const VllmExhaust part;
  return part;
}

}  // namespace r3::vllm
