// vLLM's draw part (fuzz/generate/engine_draw.hpp): a vLLM case drawn field by field in the case
// domain's order (topology, model and layer, M, tokens, padding, path and monolithic, capture
// calls, metadata and idle dummies), each choice within what the fields before it leave valid,
// then fitted to the active vLLM profile (reference/engines/vllm/profile.hpp). Templates over the
// source, instantiated for Source and SeededSource, so campaigns inline the seeded source.
#include "fuzz/engines/vllm/draw.hpp"

#include <algorithm>
#include <utility>

#include "fuzz/engines/vllm/parts.hpp"
#include "fuzz/generate/case_domain.hpp"
#include "fuzz/generate/engine_draw.hpp"
#include "fuzz/generate/seeded_source.hpp"
#include "reference/engines/vllm/profile.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3::vllm {
namespace {

template <class S, class Draw>
bool flag(S& s, Field field, Draw&& seeded) {
  return s.choose({field, 0, 0, 1}, std::forward<Draw>(seeded)) != 0;
}

// Each draw_* below takes the fields drawn before it as given. The seeded lambdas are the
// campaign's preferences (the edges of docs/layout-contract.md sections 1 to 9); their order of
// Rng calls is what a seed means, so changing one changes every campaign's cases.

template <class S>
void draw_topology(S& s, const DomainBounds& b, Topology& t) {
  const int least_tp = b.require_sp ? 2 : 1;
  const int most_tp = std::max(least_tp, b.max_tp);
  t.tp = static_cast<int>(s.choose({Field::tp, 0, least_tp, most_tp}, [&](Rng& r) -> int64_t {
    return std::clamp(r.pick({1, 2, 3, 4, 6, 8}), least_tp, most_tp);
  }));
  const int least_dp = std::max(b.min_dp, b.require_sp ? 2 : 1);
  const int dp_cap = std::max(least_dp, std::min(b.max_dp, b.max_ranks / t.tp));
  t.dp = static_cast<int>(s.choose({Field::dp, 0, least_dp, dp_cap}, [&](Rng& r) -> int64_t {
    if (r.chance(15)) return 1;
    return b.production_scale ? r.log_range(dp_cap) : r.range(1, dp_cap);
  }));
  t.ep = b.require_sp || flag(s, Field::ep, [](Rng& r) -> int64_t { return r.chance(60); });
  // vLLM enables SP MoE only with EP, and only with TP and DP ranks to shard across.
  const bool sp_allowed = t.ep && t.tp > 1 && t.dp > 1;
  t.sp = sp_allowed && (b.require_sp || flag(s, Field::sp, [](Rng& r) -> int64_t { return r.chance(60); }));
}

int64_t seeded_experts(Rng& r, int top_k, int max_experts) {
  if (max_experts > limits::kMaxExpertsInInt16 && r.chance(25)) return r.range(limits::kMaxExpertsInInt16 + 1, max_experts);
  switch (r.below(5)) {
    case 0: return top_k;
    case 1: return std::max(top_k, 8);
    case 2: return 256;
    case 3: return limits::kMaxExpertsInInt16;
    default: return r.range(top_k, limits::kMaxExpertsInInt16);
  }
}

template <class S>
void draw_model(S& s, const DomainBounds& b, Case& c) {
  ModelShape& m = c.model;
  m.layers = static_cast<int>(s.choose({Field::layers, 0, 1, b.max_layers}, [&](Rng& r) {
    return r.chance(40) ? r.range(1, 2) : r.range(1, b.max_layers);
  }));
  m.top_k = static_cast<int>(s.choose({Field::top_k, 0, 1, b.max_top_k}));
  m.experts = static_cast<int>(s.choose({Field::experts, 0, m.top_k, std::max(m.top_k, b.max_experts)},
                                        [&](Rng& r) { return seeded_experts(r, m.top_k, b.max_experts); }));
  c.layer = static_cast<int>(s.choose({Field::layer, 0, 0, m.layers - 1}, [&](Rng& r) {
    return r.chance(30) ? m.layers - 1 : r.range(0, m.layers - 1);
  }));
}

int64_t seeded_max_tokens(Rng& r, const DomainBounds& b, int tp) {
  if (b.production_scale) {
    if (r.chance(10)) return r.range(16385, b.max_tokens);
    const int64_t m = r.log_range(16384);
    return r.chance(30) ? std::max<int64_t>(tp, m - m % tp) : m;  // sometimes a multiple of T
  }
  return r.chance(20) ? b.max_tokens : r.range(1, b.max_tokens);
}

// One count in [0, M], biased toward the edges of the contract.
int64_t seeded_tokens(Rng& r, int64_t M, int tp) {
  switch (r.below(8)) {
    case 0: return 0;
    case 1: return std::min<int64_t>(1, M);
    case 2: return M;
    case 3: {  // heavy SP padding near capacity: n close to M with n mod T != 0
      int64_t n = M - static_cast<int64_t>(r.below(static_cast<uint64_t>(tp)));
      if (tp > 1 && n % tp == 0 && n > 0) --n;
      return std::max<int64_t>(0, n);
    }
    case 4: return std::min<int64_t>(M, tp + r.range(-1, 1));
    default: return r.range(0, M);
  }
}

template <class S>
void draw_tokens(S& s, Case& c) {
  const int D = c.topology.dp, T = c.topology.tp;
  const int64_t M = c.max_num_tokens;
  c.tokens.assign(static_cast<size_t>(D), 0);
  auto edge = [&](Rng& r) { return seeded_tokens(r, M, T); };
  const int64_t shape = s.choose({Field::token_shape, 0, 0, 3}, [](Rng& r) -> int64_t {
    switch (r.below(10)) {
      case 0: return 1;
      case 1: return 2;
      case 2: return 3;
      default: return 0;
    }
  });
  switch (shape) {
    case 1: {  // one rank holds every token (its count chosen before the rank)
      const int64_t held = s.choose({Field::tokens, 0, 0, M}, [&](Rng& r) { return r.chance(50) ? M : r.range(1, M); });
      c.tokens[static_cast<size_t>(s.choose({Field::token_holder, 0, 0, D - 1}))] = held;
      return;
    }
    case 2: return;  // every rank idle
    case 3:          // all ranks equal: no padding needed
      std::fill(c.tokens.begin(), c.tokens.end(), s.choose({Field::tokens, 0, 0, M}, edge));
      return;
    default:
      for (size_t d = 0; d < c.tokens.size(); ++d) c.tokens[d] = s.choose({Field::tokens, d, 0, M}, edge);
  }
}

// A custom capture list: a few increasing sizes, sometimes with buckets above M (a configured
// list; a vLLM profile then clamps it to M as vLLM does).
void seeded_capture_sizes(Rng& r, int64_t M, std::vector<int64_t>& sizes) {
  const int64_t top = r.chance(40) ? M + r.range(1, std::max<int64_t>(2, M / 2)) : M;
  const int count = static_cast<int>(r.range(1, 6));
  for (int i = 0; i < count; ++i) sizes.push_back(r.range(1, top));
  if (r.chance(50)) sizes.push_back(top);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
}

template <class S>
void draw_padding(S& s, const DomainBounds& b, Case& c) {
  const int64_t mode = s.choose({Field::padding, 0, 0, b.cudagraph ? 2 : 1}, [](Rng& r) -> int64_t {
    const uint64_t v = r.below(10);
    return v < 4 ? 0 : v < 7 ? 1 : 2;
  });
  c.padding = Padding{mode == 0 ? PaddingMode::none : mode == 1 ? PaddingMode::dp_max : PaddingMode::cudagraph, {}};
  if (c.padding.mode != PaddingMode::cudagraph) return;
  if (flag(s, Field::default_capture_sizes, [](Rng& r) -> int64_t { return r.chance(50); })) {
    const std::vector<int64_t>& sizes = default_cudagraph_sizes();
    if (sizes.back() <= b.max_capture_size && static_cast<int>(sizes.size()) <= b.max_capture_sizes) {
      c.padding.cudagraph_sizes = sizes;  // the whole list fits (every campaign size class)
      return;
    }
    auto end = std::upper_bound(sizes.begin(), sizes.end(), b.max_capture_size);
    end = sizes.begin() + std::min<std::ptrdiff_t>(end - sizes.begin(), b.max_capture_sizes);
    c.padding.cudagraph_sizes.assign(sizes.begin(), end);
    return;
  }
  // Buckets above M are a corner case (docs/layout-contract.md section 8) up to twice M.
  const int64_t M = c.max_num_tokens;
  s.increasing_list({Field::capture_sizes, 0, 1, std::min(2 * M + 2, b.max_capture_size)},
                    std::min(b.max_custom_capture_sizes, b.max_capture_sizes), b.max_capture_sizes,
                    [&](Rng& r, std::vector<int64_t>& sizes) { seeded_capture_sizes(r, M, sizes); },
                    c.padding.cudagraph_sizes);
}

template <class S>
void draw_path(S& s, Case& c) {
  if (c.topology.dp == 1) {
    c.path = Path::single;  // no DP metadata
  } else if (s.choose({Field::path, 0, 0, 1}, [](Rng& r) -> int64_t { return r.chance(50) ? 0 : 1; }) == 0) {
    c.path = Path::gathered;
  } else {
    c.path = c.topology.sp ? Path::sp_shard : Path::local;  // the modular kernel sees the SP shard
  }
  // A monolithic kernel sees the whole input: single or gathered.
  const bool whole_input = c.path == Path::single || c.path == Path::gathered;
  c.monolithic = whole_input && flag(s, Field::monolithic, [](Rng& r) -> int64_t { return r.chance(50); });
}

bool modular(const Case& c) { return c.path == Path::local || c.path == Path::sp_shard; }

// Micro-batching (under DP with dp_max padding, where the engine can) or DP chunking (on the
// modular kernel's paths, where the engine has it), never both.
template <class S>
void draw_calls(S& s, const CaseDomain& d, Case& c) {
  const DomainBounds& b = d.bounds;
  const bool may_microbatch = b.microbatching && can_microbatch(c) && engine_may_microbatch(c, d.profile);
  if (may_microbatch) {
    c.microbatches = static_cast<int>(s.choose({Field::microbatches, 0, 1, b.max_microbatches}, [&](Rng& r) {
      return r.chance(30) ? r.range(2, std::min(4, b.max_microbatches)) : 1;
    }));
    if (c.microbatches > 1) {
      if (d.profile.is_any()) return;
      // Every rank votes for micro-batching: its last micro-batch gets a real token, the busiest
      // rank's count (and so the padded count) unchanged. A step with no token at all is
      // given one by the profile's resolution, which then drops micro-batching.
      const int64_t most = *std::max_element(c.tokens.begin(), c.tokens.end());
      if (most == 0) return;
      const int64_t least = fewest_tokens_to_vote_for_ubatches(most, c.microbatches);
      for (int64_t& n : c.tokens) n = std::max(n, least);
      return;
    }
  }
  if (!b.dp_chunking || !chunking_allowed(d.profile) || !modular(c)) return;
  if (!flag(s, Field::chunked, [](Rng& r) -> int64_t { return r.chance(25); })) return;
  // C from the bound to beyond the largest rank (a larger C gives the same single chunk).
  const int64_t least = smallest_dp_chunk(c, b.max_chunks);
  c.dp_chunk = s.choose({Field::dp_chunk, 0, least, std::max(least, std::min(most_rows_to_chunk(c) + 2, b.max_dp_chunk))});
}

// Corner case 8 (docs/layout-contract.md section 8): metadata that disagrees with the tensor
// (or, sometimes, agrees).
template <class S>
void draw_metadata(S& s, Case& c) {
  const std::vector<int64_t> n = derive_num_tokens_across_dp(c);
  std::vector<int64_t> sizes = derive_local_sizes(n, c.topology.tp, c.topology.sp);
  auto coin = [](Rng& r) -> int64_t { return r.chance(50); };
  MetadataOverride o;
  switch (s.choose({Field::metadata_kind, 0, 0, 4})) {
    case 0: {  // num_tokens_across_dp of the wrong length
      std::vector<int64_t> wrong = n;
      if (flag(s, Field::metadata_edit, coin) || wrong.size() == 1) {
        wrong.push_back(s.choose({Field::metadata_edit, 0, 0, c.max_num_tokens}));
      } else {
        wrong.pop_back();
      }
      o.num_tokens_across_dp = wrong;
      break;
    }
    case 1: o.local_sizes_given = true; break;  // local_sizes unset
    case 2: {  // len(local_sizes) not a multiple of D (or not the layout's length)
      sizes.push_back(s.choose({Field::metadata_edit, 0, 1, 4}));
      o.local_sizes_given = true;
      o.local_sizes = sizes;
      break;
    }
    case 3: {  // one entry off by one
      const auto i = static_cast<size_t>(s.choose({Field::metadata_edit, 0, 0, static_cast<int64_t>(sizes.size()) - 1}));
      sizes[i] = sizes[i] == 0 ? 1 : sizes[i] + (flag(s, Field::metadata_edit, coin) ? 1 : -1);
      o.local_sizes_given = true;
      o.local_sizes = sizes;
      break;
    }
    default:  // consistent: the same metadata the layout derives
      o.num_tokens_across_dp = n;
      o.local_sizes_given = true;
      o.local_sizes = sizes;
  }
  c.metadata = std::move(o);
}

// What only profile any draws: metadata overrides (a single capture call only) and idle DP
// ranks without their dummy token. A vLLM profile's resolution gives every idle rank its dummy.
template <class S>
void draw_outside_engines(S& s, const CaseDomain& d, Case& c) {
  if (!d.profile.is_any()) return;
  if (d.bounds.metadata_overrides && c.microbatches == 1 && !c.dp_chunk &&
      flag(s, Field::metadata, [](Rng& r) -> int64_t { return r.chance(15); })) {
    draw_metadata(s, c);
  }
  if (!c.metadata && c.topology.dp > 1) c.idle_dummy = flag(s, Field::idle_dummy, [](Rng& r) -> int64_t { return r.chance(25); });
}

template <class S>
Case draw_case(S& source, const CaseDomain& domain) {
  const DomainBounds& b = domain.bounds;
  Case c;
  draw_topology(source, b, c.topology);
  draw_model(source, b, c);
  c.max_num_tokens = source.choose({Field::max_num_tokens, 0, 1, b.max_tokens},
                                   [&](Rng& r) { return seeded_max_tokens(r, b, c.topology.tp); });
  draw_tokens(source, c);
  draw_padding(source, b, c);
  draw_path(source, c);
  draw_calls(source, domain, c);
  draw_outside_engines(source, domain, c);
  if (domain.profile.is_any()) return c;
  // The profile's resolution (reference/profile.hpp): CUDA-graph sizes above M clamped as vLLM
  // clamps a configured list, idle ranks given their dummy token, a step with no token at all
  // given one, micro-batching dropped where a rank would vote against it.
  return r3::fit_to_profile(std::move(c), domain.profile);
}

class Draw final : public EngineDraw {
 public:
  Case draw(Source& source, const CaseDomain& domain) const override { return draw_case(source, domain); }
  Case draw(SeededSource& source, const CaseDomain& domain) const override { return draw_case(source, domain); }

  // The default-sizes hint: vLLM's list, or its first entries (bounds cut the rest).
  std::optional<int64_t> recorded_choice(const Case& c, Field field, size_t) const override {
    if (field != Field::default_capture_sizes) return std::nullopt;
    const auto& sizes = c.padding.cudagraph_sizes;
    const auto& defaults = default_cudagraph_sizes();
    return !sizes.empty() && sizes.size() <= defaults.size() && std::equal(sizes.begin(), sizes.end(), defaults.begin());
  }
};

}  // namespace

const std::vector<int64_t>& default_cudagraph_sizes() {
  static const std::vector<int64_t> sizes = [] {
    std::vector<int64_t> v = {1, 2, 4};
    for (int64_t s = 8; s < 256; s += 8) v.push_back(s);
    for (int64_t s = 256; s <= 512; s += 16) v.push_back(s);
    return v;
  }();
  return sizes;
}

const EngineDraw& draw_part() {
  static const Draw part;
  return part;
}

}  // namespace r3::vllm
