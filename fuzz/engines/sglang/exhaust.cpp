// SGLang's exhaustive space (exhaust.hpp states its order) and its carriers for `r3fuzz mutants`.
#include "fuzz/engines/sglang/exhaust.hpp"

#include <algorithm>

#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/exhaust/compositions.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/validate.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3::sglang {
namespace {

// One backend per capture class (reference/engines/sglang/forward_layout.hpp), and pplx, whose
// padding is always MAX_LEN (layers/dp_attention.py, get_dp_padding_mode).
constexpr A2a kBackends[] = {A2a::none, A2a::deepep, A2a::mooncake, A2a::pplx};
constexpr ForwardKind kKinds[] = {ForwardKind::extend, ForwardKind::decode, ForwardKind::verify};
constexpr int64_t kVerifyWidth = 2;

std::vector<CudaGraphs> graph_variants(int64_t align, int64_t max_m) {
  return {{{align}, {}}, {{align, 2 * align}, {}}, {{}, {max_m}}, {{align}, {max_m}}};
}

// The unit's case before its sizes and knobs are set.
Case unit_case(const CaseUnit& unit, const UnitShape& shape, const ExhaustBounds& b) {
  Case c;
  c.engine = engine();
  c.topology.dp = unit.topology.dp;
  c.topology.tp = unit.topology.tp;
  c.model = {b.layers, b.top_k, b.experts};
  Forward& f = c.engine_fields.emplace<Forward>();
  f.dp_attention = unit.topology.dp > 1;
  f.a2a = shape.a2a;
  f.kind = shape.kind;
  f.spec_width = shape.kind == ForwardKind::verify ? kVerifyWidth : 1;
  if (shape.kind == ForwardKind::extend) c.tokens = unit.counts;
  else f.requests = unit.counts;
  return c;
}

// The sizes (chunked_prefill_size, max_running_requests) in order, each handed to `visit` with
// the case set to them, until it returns false; false then.
bool for_each_size(Case& c, const ExhaustBounds& b, const std::function<bool()>& visit) {
  Forward& f = *forward_of(c);
  for (int64_t cps = -1; cps <= b.max_m; ++cps) {
    if (cps == 0) continue;
    f.chunked_prefill_size = cps;
    f.max_prefill_tokens = cps == -1 ? b.max_m : Forward{}.max_prefill_tokens;
    for (int64_t mrr = 1; mrr <= b.max_m; ++mrr) {
      f.max_running_requests = mrr;
      if (!visit()) return false;
    }
  }
  return true;
}

// The knobs at the case's sizes: TBO, graphs, the last decode bucket and the layer, each case
// that validate() and the profile accept handed to `visit` until it returns false; false then.
// validate() checks the sizes only against the counts, so once the counts fit the sizes, which
// knobs pass does not depend on the sizes: count_cases() relies on it.
bool for_each_knob(Case& c, const CaseUnit& unit, const ExhaustBounds& b, const std::function<bool(const Case&)>& visit,
                   int64_t& visited) {
  Forward& f = *forward_of(c);
  std::vector<int> layers{0};
  if (b.layers > 1) layers.push_back(b.layers - 1);
  auto emit = [&]() {
    if (!r3::validate(c).ok() || !in_profile(c, b.profile)) return true;
    for (int layer : layers) {
      c.layer = layer;
      ++visited;
      if (!visit(c)) return false;
    }
    return true;
  };
  for (bool tbo : {false, true}) {
    f.tbo = tbo;
    const int64_t align = (tbo ? 2 : 1) * (counts_aligned(c) ? unit.topology.tp : 1);
    f.cuda_graph.reset();
    f.last_decode_bucket.reset();
    if (!emit()) return false;
    for (const CudaGraphs& g : graph_variants(align, b.max_m)) {
      f.cuda_graph = g;
      f.last_decode_bucket.reset();
      if (!emit()) return false;
      if (g.decode.empty()) continue;
      f.last_decode_bucket = g.decode.front();
      if (!emit()) return false;
    }
  }
  return true;
}

int64_t largest(const std::vector<int64_t>& counts) { return *std::max_element(counts.begin(), counts.end()); }

class SglangExhaust final : public EngineExhaust {
 public:
  // SGLang's space grows faster with each bound (sizes, graphs and TBO expand every count
  // vector): its defaults keep `exhaust --profile sglang` to seconds.
  ExhaustBounds default_bounds() const override { return {.max_dp = 3, .max_tp = 2, .max_tokens = 4, .max_m = 4}; }

  std::vector<CaseUnit> unit_shapes(const ExhaustBounds& b) const override {
    std::vector<CaseUnit> shapes;
    for (int dp = 1; dp <= b.max_dp; ++dp)
      for (int tp = 1; tp <= b.max_tp; ++tp)
        for (A2a a2a : kBackends)
          for (ForwardKind kind : kKinds) {
            CaseUnit& unit = shapes.emplace_back();
            unit.engine = engine();
            unit.topology.dp = dp;
            unit.topology.tp = tp;
            unit.shape.emplace<UnitShape>({a2a, kind});
          }
    return shapes;
  }

  int64_t for_each_case(const CaseUnit& unit, const ExhaustBounds& b,
                        const std::function<bool(const Case&)>& visit) const override {
    const UnitShape* shape = unit.shape.get<UnitShape>();
    if (!shape) return 0;  // not a unit of this engine's
    Case c = unit_case(unit, *shape, b);
    const int64_t most = largest(unit.counts);
    int64_t visited = 0;
    for_each_size(c, b, [&] {
      // Sizes the counts do not fit make only cases validate() refuses: skipped whole.
      if (most > most_per_rank(*forward_of(c))) return true;
      return for_each_knob(c, unit, b, visit, visited);
    });
    return visited;
  }

  // From the sizes the unit's counts fit and the knobs at one of them instead of visiting every
  // case: sixteen validations, where visiting all takes up to 16,896 at --max-m 32.
  int64_t count_cases(const CaseUnit& unit, const ExhaustBounds& b) const override {
    const UnitShape* shape = unit.shape.get<UnitShape>();
    if (!shape) return 0;
    Case c = unit_case(unit, *shape, b);
    const int64_t most = largest(unit.counts);
    int64_t fitting = 0;
    Case first;
    for_each_size(c, b, [&] {
      if (most <= most_per_rank(*forward_of(c)) && fitting++ == 0) first = c;
      return true;
    });
    if (fitting == 0) return 0;
    int64_t per_size = 0;
    for_each_knob(first, unit, b, [](const Case&) { return true; }, per_size);
    return exhaust::saturating_add_product(0, fitting, per_size);
  }

  // Within exhaust's defaults above.
  ExhaustBounds equivalence_bounds() const override { return {3, 2, 4, 4, 2, 1, 4}; }

  // The fixed model and the GPU pipeline running it (every fault that fits SGLang:
  // reference/fault.hpp).
  std::vector<std::string_view> carriers() const override { return {"sglang-fixed", "gpu:sglang-fixed"}; }
};

}  // namespace

const EngineExhaust& exhaust_part() {
  static const SglangExhaust part;
  return part;
}

}  // namespace r3::sglang
