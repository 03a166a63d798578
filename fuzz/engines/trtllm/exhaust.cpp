// TensorRT-LLM's part of `r3fuzz exhaust`'s space (fuzz/exhaust/case_space.hpp): the base case on
// one rank, the only topology profile trtllm runs (reference/engines/trtllm/profile.cpp). The
// order, most significant first: T, tokens (the forward's rows), M, padding variant, layer.
//   - T in 1..max_tp (D is 1: units of a larger D are skipped);
//   - M in max(1, rows)..max_m;
//   - padding: none; the captured batch sizes {1} (a forward above one row runs eagerly), the
//     powers of two up to M, and {M} (CUDAGraphRunner._get_padded_batch pads to the smallest
//     captured size at or above the batch, within the engine's batch size: draw.cpp);
//   - layer 0 and L-1.
// It has no carrier for `r3fuzz mutants`: the mutant table's faults are vLLM's and SGLang's
// capture paths (TrtllmModel::has_fault), so there is nothing to measure.
#include <algorithm>
#include <vector>

#include "fuzz/engines/trtllm/parts.hpp"
#include "fuzz/exhaust/engine_exhaust.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/profile.hpp"

namespace r3::trtllm {
namespace {

std::vector<Padding> paddings(int64_t m) {
  std::vector<Padding> out{{PaddingMode::none, {}}, {PaddingMode::cudagraph, {1}}};
  Padding powers{PaddingMode::cudagraph, {1}};
  while (powers.cudagraph_sizes.back() * 2 <= m) powers.cudagraph_sizes.push_back(powers.cudagraph_sizes.back() * 2);
  if (powers.cudagraph_sizes.size() > 1) out.push_back(powers);
  if (m > 1) out.push_back({PaddingMode::cudagraph, {m}});
  return out;
}

class TrtllmExhaust final : public EngineExhaust {
 public:
  ExhaustBounds default_bounds() const override { return {.max_dp = 1, .max_tp = 4, .max_tokens = 9, .max_m = 9}; }

  std::vector<CaseUnit> unit_shapes(const ExhaustBounds& b) const override {
    std::vector<CaseUnit> shapes;
    for (int tp = 1; tp <= b.max_tp; ++tp) shapes.push_back({engine(), {1, tp, false, false}, {}, {}});
    return shapes;
  }

  int64_t for_each_case(const CaseUnit& unit, const ExhaustBounds& b,
                        const std::function<bool(const Case&)>& visit) const override {
    if (unit.topology.dp != 1 || unit.counts.size() != 1) return 0;
    Case c;
    c.engine = engine();
    c.topology = unit.topology;
    c.model = {b.layers, b.top_k, b.experts};
    c.tokens = unit.counts;
    std::vector<int> layers{0};
    if (b.layers > 1) layers.push_back(b.layers - 1);
    int64_t visited = 0;
    for (int64_t m = std::max<int64_t>(1, unit.counts[0]); m <= b.max_m; ++m) {
      c.max_num_tokens = m;
      for (const Padding& padding : paddings(m)) {
        c.padding = padding;
        if (!in_profile(c, b.profile)) continue;
        for (int layer : layers) {
          c.layer = layer;
          ++visited;
          if (!visit(c)) return visited;
        }
      }
    }
    return visited;
  }

  ExhaustBounds equivalence_bounds() const override { return {.max_dp = 1, .max_tp = 2, .max_tokens = 5, .max_m = 5}; }
  std::vector<std::string_view> carriers() const override { return {}; }
};

}  // namespace

const EngineExhaust& exhaust_part() {
  static const TrtllmExhaust part;
  return part;
}

}  // namespace r3::trtllm
