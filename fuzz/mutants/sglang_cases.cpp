#include "fuzz/mutants/sglang_cases.hpp"

#include <random>

#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using sglang::A2a;
using sglang::ForwardKind;

struct Draw {
  std::mt19937_64 rng;
  int64_t in(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  bool chance(int percent) { return in(1, 100) <= percent; }
};

// Increasing buckets, each a multiple of `align`.
std::vector<int64_t> buckets(Draw& d, int64_t align, int count) {
  std::vector<int64_t> out;
  int64_t b = 0;
  for (int i = 0; i < count; ++i) out.push_back(b += align * d.in(1, 2));
  return out;
}

Case draw_once(Draw& d) {
  Case c;
  c.engine = Engine::sglang;
  sglang::Forward f;
  f.dp_attention = d.chance(70);
  c.topology.dp = f.dp_attention ? static_cast<int>(d.in(2, 3)) : 1;
  c.topology.tp = static_cast<int>(d.in(1, 3));
  const int a2a = static_cast<int>(d.in(0, 7));
  f.a2a = a2a < 4 ? A2a::none : a2a < 6 ? A2a::deepep : static_cast<A2a>(d.in(2, sglang::kA2aCount - 1));
  f.kind = static_cast<ForwardKind>(d.in(0, 2));
  f.spec_width = f.kind == ForwardKind::verify ? d.in(2, 3) : 1;
  f.tbo = d.chance(30);
  f.max_running_requests = d.in(1, 5);
  f.chunked_prefill_size = d.chance(20) ? -1 : d.in(1, 12);
  f.max_prefill_tokens = 12;
  c.model = {static_cast<int>(d.in(1, 2)), static_cast<int>(d.in(1, 2)), 64};
  c.layer = static_cast<int>(d.in(0, c.model.layers - 1));
  const int64_t most_tokens = f.chunked_prefill_size == -1 ? f.max_prefill_tokens : f.chunked_prefill_size;
  for (int r = 0; r < c.topology.dp; ++r) {
    const bool idle = d.chance(20);
    if (f.kind == ForwardKind::extend) c.tokens.push_back(idle ? 0 : d.in(1, most_tokens));
    else f.requests.push_back(idle ? 0 : d.in(1, f.max_running_requests));
  }
  if (d.chance(70)) {
    sglang::CudaGraphs g;
    const bool aligned = f.dp_attention || (f.a2a != A2a::none && c.topology.tp > 1);
    const int64_t align = (f.tbo ? 2 : 1) * (aligned ? c.topology.tp : 1);
    if (d.chance(80)) g.decode = buckets(d, align, static_cast<int>(d.in(1, 3)));
    if (d.chance(40)) g.prefill = buckets(d, 4, static_cast<int>(d.in(1, 2)));
    if (g.decode.empty() && g.prefill.empty()) g.decode = {align};
    if (!g.decode.empty() && d.chance(70)) f.last_decode_bucket = g.decode[static_cast<size_t>(d.in(0, g.decode.size() - 1))];
    f.cuda_graph = g;
  }
  c.sglang = f;
  return c;
}

}  // namespace

Case draw_sglang_case(uint64_t seed, uint64_t index, Profile profile) {
  Draw d{std::mt19937_64(seed * 0x9E3779B97F4A7C15ull ^ (index + 0x632BE59BD9B4E019ull))};
  for (;;) {
    Case c = fit_to_profile(draw_once(d), profile);
    if (validate(c).ok() && in_profile(c, profile)) return c;
  }
}

}  // namespace r3
