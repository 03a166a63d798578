// vllm-ascend's exhaustive space (fuzz/exhaust/engine_exhaust.hpp). Per topology (EP off and on,
// SP where the base rules allow it) and counts: M from the largest count up, then each chip and
// knob set that picks a comm type differently (a2, a3, a3 with fused MC2, a5, 310p; LoRA; B of the
// MC2 capacity derived or 1, which sends A3 to ALLTOALL), each runner, and eager or a graph step
// at one capture size (M, or M rounded up to T). Only cases inside the bounds' profile are visited.
#include <algorithm>

#include "fuzz/engines/ascend/parts.hpp"
#include "fuzz/exhaust/engine_exhaust.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3::ascend {
namespace {

std::vector<Topology> topologies(int dp, int tp) {
  std::vector<Topology> out{{dp, tp, false, false}, {dp, tp, true, false}};
  if (dp > 1 && tp > 1) out.push_back({dp, tp, true, true});
  return out;
}

struct Knobs {
  Chip chip;
  bool fused_mc2;
};
constexpr Knobs kKnobs[] = {{Chip::a2, false}, {Chip::a3, false}, {Chip::a3, true}, {Chip::a5, false}, {Chip::p310, false}};

class AscendExhaust final : public EngineExhaust {
 public:
  ExhaustBounds default_bounds() const override { return {.max_dp = 3, .max_tp = 3, .max_tokens = 6, .max_m = 6}; }

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
    c.engine = engine();
    c.topology = unit.topology;
    c.model = {b.layers, b.top_k, b.experts};
    c.tokens = unit.counts;
    const int T = c.topology.tp;
    Fields& f = c.engine_fields.emplace<Fields>();
    const int64_t most_tokens = *std::max_element(unit.counts.begin(), unit.counts.end());
    std::vector<bool> dummies{false};
    if (unit.topology.dp > 1) dummies = b.profile.is_any() ? std::vector<bool>{false, true} : std::vector<bool>{true};
    int64_t visited = 0;
    auto emit = [&]() {
      for (bool dummy : dummies) {
        c.idle_dummy = dummy;
        if (!in_profile(c, b.profile)) continue;
        ++visited;
        if (!visit(c)) return false;
      }
      return true;
    };
    for (int64_t m = std::max<int64_t>(1, most_tokens); m <= b.max_m; ++m) {
      c.max_num_tokens = m;
      for (const Knobs& k : kKnobs)
        for (bool lora : {false, true})
          for (int64_t mc2_tokens : {int64_t{0}, int64_t{1}}) {
            f.chip = k.chip;
            f.fused_mc2 = k.fused_mc2;
            f.lora = lora;
            f.mc2_tokens = mc2_tokens;
            for (Runner runner : {Runner::v1, Runner::mrv2}) {
              f.runner = runner;
              f.graph = Graph::eager;
              c.padding.cudagraph_sizes.clear();
              for (PaddingMode mode : {PaddingMode::none, PaddingMode::dp_max}) {
                c.padding.mode = mode;
                if (!emit()) return visited;
              }
              f.graph = Graph::full_decode_only;
              c.padding.mode = PaddingMode::cudagraph;
              for (int64_t size : {m, T * ceil_div(m, T)}) {
                if (size == T * ceil_div(m, T) && size == m && c.padding.cudagraph_sizes == std::vector<int64_t>{m}) continue;
                c.padding.cudagraph_sizes = {size};
                if (!emit()) return visited;
              }
            }
          }
    }
    return visited;
  }

  ExhaustBounds equivalence_bounds() const override { return {.max_dp = 3, .max_tp = 3, .max_tokens = 5, .max_m = 5}; }

  std::vector<std::string_view> carriers() const override { return {"ascend-fixed"}; }
};

}  // namespace

const EngineExhaust& exhaust_part() {
  static const AscendExhaust part;
  return part;
}

}  // namespace r3::ascend
