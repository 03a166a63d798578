#include "fuzz/engines/sglang/exhaust_space.hpp"

#include "fuzz/exhaust/compositions.hpp"

#include <algorithm>

#include "reference/engines/sglang/validate.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using exhaust::compositions;

// One backend per capture class (reference/engines/sglang/forward_layout.hpp), and pplx, whose
// padding is always MAX_LEN (layers/dp_attention.py, get_dp_padding_mode).
constexpr sglang::A2a kBackends[] = {sglang::A2a::none, sglang::A2a::deepep, sglang::A2a::mooncake, sglang::A2a::pplx};
constexpr sglang::ForwardKind kKinds[] = {sglang::ForwardKind::extend, sglang::ForwardKind::decode,
                                          sglang::ForwardKind::verify};
constexpr int64_t kVerifyWidth = 2;

std::vector<sglang::CudaGraphs> graph_variants(int64_t align, int64_t max_m) {
  return {{{align}, {}}, {{align, 2 * align}, {}}, {{}, {max_m}}, {{align}, {max_m}}};
}

}  // namespace

std::vector<SglangUnit> enumerate_sglang_units(const ExhaustBounds& b) {
  std::vector<SglangUnit> units;
  std::vector<int64_t> prefix;
  std::vector<std::vector<int64_t>> vectors;
  for (int dp = 1; dp <= b.max_dp; ++dp)
    for (int tp = 1; tp <= b.max_tp; ++tp)
      for (sglang::A2a a2a : kBackends)
        for (sglang::ForwardKind kind : kKinds)
          for (int64_t sum = 0; sum <= b.max_tokens; ++sum) {
            vectors.clear();
            compositions(dp, sum, b.max_m, prefix, vectors);
            for (auto& counts : vectors) units.push_back({dp, tp, a2a, kind, std::move(counts)});
          }
  return units;
}

int64_t for_each_sglang_case(const SglangUnit& unit, const ExhaustBounds& b,
                             const std::function<bool(const Case&)>& visit) {
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
  std::vector<int> layers{0};
  if (b.layers > 1) layers.push_back(b.layers - 1);
  int64_t visited = 0;
  auto emit = [&]() {
    if (!validate(c).ok() || !in_profile(c, b.profile)) return true;
    for (int layer : layers) {
      c.layer = layer;
      ++visited;
      if (!visit(c)) return false;
    }
    return true;
  };
  for (int64_t cps = -1; cps <= b.max_m; ++cps) {
    if (cps == 0) continue;
    f.chunked_prefill_size = cps;
    f.max_prefill_tokens = cps == -1 ? b.max_m : sglang::Forward{}.max_prefill_tokens;
    for (int64_t mrr = 1; mrr <= b.max_m; ++mrr) {
      f.max_running_requests = mrr;
      for (bool tbo : {false, true}) {
        f.tbo = tbo;
        const int64_t align = (tbo ? 2 : 1) * (sglang::counts_aligned(c) ? unit.tp : 1);
        f.cuda_graph.reset();
        f.last_decode_bucket.reset();
        if (!emit()) return visited;
        for (const sglang::CudaGraphs& g : graph_variants(align, b.max_m)) {
          f.cuda_graph = g;
          f.last_decode_bucket.reset();
          if (!emit()) return visited;
          if (g.decode.empty()) continue;
          f.last_decode_bucket = g.decode.front();
          if (!emit()) return visited;
        }
      }
    }
  }
  return visited;
}

}  // namespace r3
