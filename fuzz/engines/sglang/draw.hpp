// SGLang's half of the case domain (fuzz/generate/case_domain.hpp), reached through its draw
// part (draw.cpp): an SGLang forward drawn field by field, each choice within what the fields
// before it leave valid (reference/engines/sglang/validate.cpp) and, where a version's rules
// narrow it, inside the active profile (reference/engines/sglang/profile.hpp). A template over
// the source, like the vLLM draw, so campaigns inline the seeded source.
#pragma once

#include <algorithm>
#include <utility>

#include "fuzz/engines/sglang/draw_fields.hpp"
#include "fuzz/generate/case_domain.hpp"
#include "fuzz/generate/source.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/layout.hpp"
#include "reference/engines/sglang/profile.hpp"
#include "reference/engines/sglang/validate.hpp"

namespace r3::sglang::detail {

// Sizes of an SGLang forward per size class: per-rank counts stay within `max_tokens` (prefill
// chunks, max_running_requests * w, buckets), so the device buffer (dp times that) stays
// concrete-sized in the tiny and small classes.
struct SglangBounds {
  int64_t max_tokens;
  int64_t max_requests;
  int max_spec_width;
};

inline SglangBounds sglang_bounds(const DomainBounds& b) {
  if (b.production_scale) return {16384, 1024, 8};
  return {std::max<int64_t>(2, b.max_tokens / 2), std::max<int64_t>(1, b.max_tokens / 8), 4};
}

template <class S>
bool sglang_flag(S& s, Field field, int percent) {
  return s.choose({field, 0, 0, 1}, [percent](Rng& r) -> int64_t { return r.chance(percent); }) != 0;
}

template <class S>
void draw_sglang_topology(S& s, const DomainBounds& b, Case& c) {
  sglang::Forward& f = *sglang::forward_of(c);
  c.topology.tp = static_cast<int>(s.choose({Field::tp, 0, 1, std::max(1, b.max_tp)}, [&](Rng& r) -> int64_t {
    return std::clamp(r.pick({1, 2, 4, 8}), 1, std::max(1, b.max_tp));
  }));
  const int dp_cap = std::max(1, std::min(b.max_dp, b.max_ranks / c.topology.tp));
  f.dp_attention = dp_cap >= 2 && sglang_flag(s, field::dp_attention, 65);
  c.topology.dp = f.dp_attention ? static_cast<int>(s.choose({Field::dp, 0, 2, dp_cap}, [&](Rng& r) -> int64_t {
    return b.production_scale ? std::max<int64_t>(2, r.log_range(dp_cap)) : r.range(2, dp_cap);
  }))
                                 : 1;
  f.a2a = static_cast<sglang::A2a>(s.choose({field::a2a, 0, 0, sglang::kA2aCount - 1}, [](Rng& r) -> int64_t {
    const uint64_t v = r.below(20);
    return v < 9 ? 0 : v < 14 ? 1 : static_cast<int64_t>(r.range(2, sglang::kA2aCount - 1));
  }));
}

template <class S>
void draw_sglang_sizes(S& s, const SglangBounds& g, Case& c) {
  sglang::Forward& f = *sglang::forward_of(c);
  f.kind = static_cast<sglang::ForwardKind>(s.choose({field::forward, 0, 0, 2}, [](Rng& r) -> int64_t {
    return static_cast<int64_t>(r.below(3));
  }));
  if (f.kind == sglang::ForwardKind::verify) {
    f.spec_width = s.choose({field::spec_width, 0, 2, g.max_spec_width}, [&](Rng& r) -> int64_t {
      return std::min<int64_t>(g.max_spec_width, r.pick({2, 3, 4, 5, 8}));
    });
  }
  f.max_running_requests = s.choose({field::max_running_requests, 0, 1, g.max_requests}, [&](Rng& r) {
    return r.chance(30) ? g.max_requests : r.range(1, g.max_requests);
  });
  if (sglang_flag(s, field::chunked_prefill, 85)) {
    f.chunked_prefill_size = s.choose({field::chunked_prefill_size, 0, 1, g.max_tokens}, [&](Rng& r) {
      return r.chance(30) ? g.max_tokens : r.range(1, g.max_tokens);
    });
  } else {
    f.chunked_prefill_size = -1;
    f.max_prefill_tokens = g.max_tokens;  // the engine's bound on an unchunked prefill, sized to the class
  }
}

// One count in [0, most], toward the edges: idle, one, the most, one off a multiple of attn_tp.
inline int64_t seeded_count(Rng& r, int64_t most, int tp) {
  switch (r.below(7)) {
    case 0: return 0;
    case 1: return std::min<int64_t>(1, most);
    case 2: return most;
    case 3: return std::clamp<int64_t>(tp + r.range(-1, 1), 0, most);
    default: return r.range(0, most);
  }
}

template <class S>
void draw_sglang_counts(S& s, Case& c) {
  sglang::Forward& f = *sglang::forward_of(c);
  const size_t D = static_cast<size_t>(c.topology.dp);
  const bool extend = f.kind == sglang::ForwardKind::extend;
  const int64_t most = extend ? (f.chunked_prefill_size == -1 ? f.max_prefill_tokens : f.chunked_prefill_size)
                              : f.max_running_requests;
  std::vector<int64_t>& counts = extend ? c.tokens : f.requests;
  const Field counted = extend ? Field::tokens : field::requests;
  counts.assign(D, 0);
  for (size_t r = 0; r < D; ++r)
    counts[r] = s.choose({counted, r, 0, most}, [&](Rng& g) { return seeded_count(g, most, c.topology.tp); });
}

// The captured buckets. Decode buckets are multiples of the alignment SGLang captures with
// (utils/common.py, get_cuda_graph_batch_size_alignment); the largest often is
// max_running_requests (cuda_graph_max_bs follows it), sometimes below the busiest rank (the
// forward then runs eager).
template <class S>
void draw_sglang_graphs(S& s, const CaseDomain& d, const SglangBounds& g, Case& c) {
  sglang::Forward& f = *sglang::forward_of(c);
  const bool prefill_ok = d.profile.is_any() || sglang::prefill_graph_allowed(c, d.profile);
  if (!sglang_flag(s, field::cuda_graph, 65)) return;
  sglang::CudaGraphs graphs;
  const int64_t align = (f.tbo ? 2 : 1) * (sglang::counts_aligned(c) ? c.topology.tp : 1);
  const int64_t units = std::max<int64_t>(1, (f.max_running_requests + align - 1) / align);
  s.increasing_list({field::decode_buckets, 0, 1, units}, 6, limits::kMaxCudagraphSizes,
                    [&](Rng& r, std::vector<int64_t>& out) {
                      const int count = static_cast<int>(r.range(1, 5));
                      for (int i = 0; i < count; ++i) out.push_back(r.range(1, units));
                      if (r.chance(60)) out.push_back(units);
                      std::sort(out.begin(), out.end());
                      out.erase(std::unique(out.begin(), out.end()), out.end());
                    },
                    graphs.decode);
  for (int64_t& b : graphs.decode) b *= align;
  if (prefill_ok && sglang_flag(s, field::prefill_graph, 50)) {
    s.increasing_list({field::prefill_buckets, 0, 1, g.max_tokens}, 6, limits::kMaxCudagraphSizes,
                      [&](Rng& r, std::vector<int64_t>& out) {
                        const int count = static_cast<int>(r.range(1, 4));
                        for (int i = 0; i < count; ++i) out.push_back(r.range(1, g.max_tokens));
                        std::sort(out.begin(), out.end());
                        out.erase(std::unique(out.begin(), out.end()), out.end());
                      },
                      graphs.prefill);
  }
  const int64_t last = s.choose({field::last_decode_bucket, 0, 0, static_cast<int64_t>(graphs.decode.size())},
                                [&](Rng& r) -> int64_t {
                                  return r.chance(25) ? 0 : r.range(1, static_cast<int64_t>(graphs.decode.size()));
                                });
  if (last > 0) f.last_decode_bucket = graphs.decode[static_cast<size_t>(last - 1)];
  f.cuda_graph = std::move(graphs);
}

template <class S>
Case draw_sglang_case(S& s, const CaseDomain& d) {
  const DomainBounds& b = d.bounds;
  const SglangBounds g = sglang_bounds(b);
  Case c;
  c.engine = sglang::engine();
  c.engine_fields.emplace<sglang::Forward>();
  draw_sglang_topology(s, b, c);
  // The model and layer: the same choices as a vLLM case's.
  c.model.layers = static_cast<int>(s.choose({Field::layers, 0, 1, b.max_layers}, [&](Rng& r) {
    return r.chance(40) ? r.range(1, 2) : r.range(1, b.max_layers);
  }));
  c.model.top_k = static_cast<int>(s.choose({Field::top_k, 0, 1, b.max_top_k}));
  c.model.experts = static_cast<int>(s.choose({Field::experts, 0, c.model.top_k, std::max(c.model.top_k, 256)}, [&](Rng& r) -> int64_t {
    return r.chance(50) ? 256 : r.range(c.model.top_k, 256);
  }));
  c.layer = static_cast<int>(s.choose({Field::layer, 0, 0, c.model.layers - 1}));
  draw_sglang_sizes(s, g, c);
  draw_sglang_counts(s, c);
  // TBO where the configuration allows it (server_args.py, _check_two_batch_overlap).
  sglang::forward_of(c)->tbo = (d.profile.is_any() || sglang::tbo_allowed(c)) && sglang_flag(s, field::tbo, 20);
  draw_sglang_graphs(s, d, g, c);
  if (d.profile.is_any()) return c;
  return r3::fit_to_profile(std::move(c), d.profile);
}

}  // namespace r3::sglang::detail
