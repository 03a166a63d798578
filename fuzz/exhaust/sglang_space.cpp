#include "fuzz/exhaust/sglang_space.hpp"

#include <algorithm>

#include "fuzz/exhaust/compositions.hpp"

#include "reference/engines/sglang/validate.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

// One backend per capture class (reference/engines/sglang/forward_layout.hpp), and pplx, whose
// padding is always MAX_LEN (layers/dp_attention.py, get_dp_padding_mode).
constexpr sglang::A2a kBackends[] = {sglang::A2a::none, sglang::A2a::deepep, sglang::A2a::mooncake, sglang::A2a::pplx};
constexpr sglang::ForwardKind kKinds[] = {sglang::ForwardKind::extend, sglang::ForwardKind::decode,
                                          sglang::ForwardKind::verify};
constexpr int64_t kVerifyWidth = 2;

std::vector<sglang::CudaGraphs> graph_variants(int64_t align, int64_t max_m) {
  return {{{align}, {}}, {{align, 2 * align}, {}}, {{}, {max_m}}, {{align}, {max_m}}};
}

// The unit's case before its sizes and knobs are set.
Case unit_case(const SglangUnit& unit, const ExhaustBounds& b) {
  Case c;
  c.engine = Engine::sglang;
  c.topology.dp = unit.dp;
  c.topology.tp = unit.tp;
  c.model = {b.layers, b.top_k, b.experts};
  sglang::Forward& f = c.sglang.emplace();
  f.dp_attention = unit.dp > 1;
  f.a2a = unit.a2a;
  f.kind = unit.kind;
  f.spec_width = unit.kind == sglang::ForwardKind::verify ? kVerifyWidth : 1;
  if (unit.kind == sglang::ForwardKind::extend) c.tokens = unit.counts;
  else f.requests = unit.counts;
  return c;
}

// The sizes (chunked_prefill_size, max_running_requests) in order, each handed to `visit` with
// the case set to them, until it returns false; false then.
bool for_each_size(Case& c, const ExhaustBounds& b, const std::function<bool()>& visit) {
  sglang::Forward& f = *c.sglang;
  for (int64_t cps = -1; cps <= b.max_m; ++cps) {
    if (cps == 0) continue;
    f.chunked_prefill_size = cps;
    f.max_prefill_tokens = cps == -1 ? b.max_m : sglang::Forward{}.max_prefill_tokens;
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
// knobs pass does not depend on the sizes: count_sglang_cases() relies on it.
bool for_each_knob(Case& c, const SglangUnit& unit, const ExhaustBounds& b, const std::function<bool(const Case&)>& visit,
                   int64_t& visited) {
  sglang::Forward& f = *c.sglang;
  std::vector<int> layers{0};
  if (b.layers > 1) layers.push_back(b.layers - 1);
  auto emit = [&]() {
    if (!validate(c).ok() || !in_profile(c, b.profile)) return true;
    for (int layer : layers) {
      c.layer = layer;
      ++visited;
      if (!visit(c)) return false;
    }
    return true;
  };
  for (bool tbo : {false, true}) {
    f.tbo = tbo;
    const int64_t align = (tbo ? 2 : 1) * (sglang::counts_aligned(c) ? unit.tp : 1);
    f.cuda_graph.reset();
    f.last_decode_bucket.reset();
    if (!emit()) return false;
    for (const sglang::CudaGraphs& g : graph_variants(align, b.max_m)) {
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

}  // namespace

std::vector<SglangUnit> sglang_unit_shapes(const ExhaustBounds& b) {
  std::vector<SglangUnit> shapes;
  for (int dp = 1; dp <= b.max_dp; ++dp)
    for (int tp = 1; tp <= b.max_tp; ++tp)
      for (sglang::A2a a2a : kBackends)
        for (sglang::ForwardKind kind : kKinds) shapes.push_back({dp, tp, a2a, kind, {}});
  return shapes;
}

std::vector<SglangUnit> enumerate_sglang_units(const ExhaustBounds& b) {
  std::vector<SglangUnit> units;
  for (const SglangUnit& shape : sglang_unit_shapes(b)) {
    for (exhaust::CountVectors counts(shape.dp, b.max_tokens, b.max_m); !counts.done(); counts.next()) {
      units.push_back(shape);
      units.back().counts = *counts;
    }
  }
  return units;
}

int64_t for_each_sglang_case(const SglangUnit& unit, const ExhaustBounds& b,
                             const std::function<bool(const Case&)>& visit) {
  Case c = unit_case(unit, b);
  const int64_t most = largest(unit.counts);
  int64_t visited = 0;
  for_each_size(c, b, [&] {
    // Sizes the counts do not fit make only cases validate() refuses: skipped whole.
    if (most > sglang::most_per_rank(*c.sglang)) return true;
    return for_each_knob(c, unit, b, visit, visited);
  });
  return visited;
}

int64_t count_sglang_cases(const SglangUnit& unit, const ExhaustBounds& b) {
  Case c = unit_case(unit, b);
  const int64_t most = largest(unit.counts);
  int64_t fitting = 0;
  Case first;
  for_each_size(c, b, [&] {
    if (most <= sglang::most_per_rank(*c.sglang) && fitting++ == 0) first = c;
    return true;
  });
  if (fitting == 0) return 0;
  int64_t per_size = 0;
  for_each_knob(first, unit, b, [](const Case&) { return true; }, per_size);
  return exhaust::saturating_add_product(0, fitting, per_size);
}

}  // namespace r3
