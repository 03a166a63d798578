// vllm-ascend's draw part (fuzz/generate/engine_draw.hpp): the vLLM part of a case (topology,
// model and layer, M, tokens), then the Ascend fields (chip, LoRA, fused MC2, the MC2 capacity's
// B, runner, graph mode and its capture sizes), then fitted to the active Ascend profile
// (reference/engines/ascend/profile.hpp), which sets SP and the padding the runner uses.
// Templates over the source, instantiated for Source and SeededSource.
#include <algorithm>
#include <utility>

#include "fuzz/engines/ascend/draw_fields.hpp"
#include "fuzz/engines/ascend/parts.hpp"
#include "fuzz/generate/case_domain.hpp"
#include "fuzz/generate/engine_draw.hpp"
#include "fuzz/generate/seeded_source.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3::ascend {
namespace {

template <class S>
bool flag(S& s, Field field, int percent) {
  return s.choose({field, 0, 0, 1}, [percent](Rng& r) -> int64_t { return r.chance(percent); }) != 0;
}

template <class S>
void draw_topology(S& s, const DomainBounds& b, Topology& t) {
  const int most_tp = std::max(1, b.max_tp);
  t.tp = static_cast<int>(s.choose({Field::tp, 0, 1, most_tp}, [&](Rng& r) -> int64_t {
    return std::clamp<int64_t>(r.pick({1, 2, 3, 4, 8}), 1, most_tp);
  }));
  const int least_dp = std::max(1, b.min_dp);
  const int dp_cap = std::max(least_dp, std::min(b.max_dp, b.max_ranks / t.tp));
  t.dp = static_cast<int>(s.choose({Field::dp, 0, least_dp, dp_cap}, [&](Rng& r) -> int64_t {
    return r.chance(25) ? 1 : b.production_scale ? r.log_range(dp_cap) : r.range(1, dp_cap);
  }));
  t.ep = flag(s, Field::ep, 80);
  // Profile any keeps the base rule (SP needs EP, T > 1, D > 1); an Ascend profile sets SP.
  t.sp = t.ep && t.tp > 1 && t.dp > 1 && flag(s, Field::sp, 60);
}

template <class S>
void draw_model(S& s, const DomainBounds& b, Case& c) {
  ModelShape& m = c.model;
  m.layers = static_cast<int>(s.choose({Field::layers, 0, 1, b.max_layers}, [&](Rng& r) { return r.range(1, 2); }));
  m.top_k = static_cast<int>(s.choose({Field::top_k, 0, 1, b.max_top_k}));
  // A2's MC2 rule reads experts per EP rank (<= 24), A5's ALLGATHER rule top_k.
  m.experts = static_cast<int>(s.choose({Field::experts, 0, m.top_k, std::max(m.top_k, std::min(b.max_experts, 1024))},
                                        [&](Rng& r) -> int64_t { return r.pick({8, 64, 256, 384}); }));
  c.layer = static_cast<int>(s.choose({Field::layer, 0, 0, m.layers - 1}));
}

// One count in [0, M], biased toward the edges: 0, 1, M, T, counts just off a multiple of T.
int64_t seeded_tokens(Rng& r, int64_t M, int tp) {
  switch (r.below(6)) {
    case 0: return 0;
    case 1: return std::min<int64_t>(1, M);
    case 2: return M;
    case 3: return std::clamp<int64_t>(tp + r.range(-1, 1), 0, M);
    default: return r.range(0, M);
  }
}

template <class S>
void draw_tokens(S& s, Case& c) {
  const int64_t M = c.max_num_tokens;
  c.tokens.assign(static_cast<size_t>(c.topology.dp), 0);
  for (size_t d = 0; d < c.tokens.size(); ++d)
    c.tokens[d] = s.choose({Field::tokens, d, 0, M}, [&](Rng& r) { return seeded_tokens(r, M, c.topology.tp); });
  c.idle_dummy = c.topology.dp > 1 && flag(s, Field::idle_dummy, 90);
}

template <class S>
void draw_fields(S& s, const DomainBounds& b, Case& c, Fields& f) {
  f.chip = static_cast<Chip>(s.choose({field::chip, 0, 0, kChipCount - 1}, [](Rng& r) -> int64_t {
    return r.chance(60) ? static_cast<int64_t>(Chip::a3) : r.range(0, kChipCount - 1);
  }));
  f.lora = flag(s, field::lora, 20);
  f.fused_mc2 = flag(s, field::fused_mc2, 20);
  // B below M reaches A3's ALLTOALL (a step's max above the capacity).
  f.mc2_tokens = s.choose({field::mc2_tokens, 0, 0, c.max_num_tokens}, [&](Rng& r) -> int64_t {
    return r.chance(60) ? 0 : r.range(1, c.max_num_tokens);
  });
  f.runner = static_cast<Runner>(s.choose({field::runner, 0, 0, kRunnerCount - 1}));
  f.graph = static_cast<Graph>(s.choose({field::graph, 0, 0, b.cudagraph ? kGraphCount - 1 : 0}, [](Rng& r) -> int64_t {
    return r.chance(50) ? 0 : r.range(1, kGraphCount - 1);
  }));
  const int64_t mode = s.choose({Field::padding, 0, 0, b.cudagraph ? 2 : 1});
  c.padding = Padding{mode == 0 ? PaddingMode::none : mode == 1 ? PaddingMode::dp_max : PaddingMode::cudagraph, {}};
  if (f.graph != Graph::eager) c.padding.mode = PaddingMode::cudagraph;
  if (c.padding.mode != PaddingMode::cudagraph) return;
  const int64_t M = c.max_num_tokens;
  s.increasing_list({Field::capture_sizes, 0, 1, std::min(M, b.max_capture_size)}, std::min(b.max_custom_capture_sizes, b.max_capture_sizes),
                    b.max_capture_sizes,
                    [&](Rng& r, std::vector<int64_t>& sizes) {
                      const int count = static_cast<int>(r.range(1, 4));
                      for (int i = 0; i < count; ++i) sizes.push_back(r.range(1, M));
                      if (r.chance(50)) sizes.push_back(M);
                      std::sort(sizes.begin(), sizes.end());
                      sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
                    },
                    c.padding.cudagraph_sizes);
}

template <class S>
Case draw_case(S& source, const CaseDomain& domain) {
  const DomainBounds& b = domain.bounds;
  Case c;
  c.engine = ascend::engine();
  draw_topology(source, b, c.topology);
  draw_model(source, b, c);
  c.max_num_tokens = source.choose({Field::max_num_tokens, 0, 1, b.max_tokens},
                                   [&](Rng& r) { return r.chance(30) ? b.max_tokens : r.range(1, b.max_tokens); });
  draw_tokens(source, c);
  Fields& f = c.engine_fields.emplace<Fields>();
  draw_fields(source, b, c, f);
  if (domain.profile.is_any()) return c;
  return r3::fit_to_profile(std::move(c), domain.profile);
}

class Draw final : public EngineDraw {
 public:
  Case draw(Source& source, const CaseDomain& domain) const override { return draw_case(source, domain); }
  Case draw(SeededSource& source, const CaseDomain& domain) const override { return draw_case(source, domain); }

  std::span<const FieldInfo> own_fields() const override { return field::kInfos; }

  std::optional<int64_t> recorded_choice(const Case& c, Field field, size_t) const override {
    const Fields* f = fields_of(c);
    if (!f) return std::nullopt;
    switch (field) {
      case field::chip: return static_cast<int64_t>(f->chip);
      case field::runner: return static_cast<int64_t>(f->runner);
      case field::graph: return static_cast<int64_t>(f->graph);
      case field::lora: return f->lora;
      case field::fused_mc2: return f->fused_mc2;
      case field::mc2_tokens: return f->mc2_tokens;
      default: return std::nullopt;
    }
  }
};

}  // namespace

const EngineDraw& draw_part() {
  static const Draw part;
  return part;
}

}  // namespace r3::ascend
