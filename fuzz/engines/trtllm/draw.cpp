// The trtllm engine's draw part (fuzz/generate/engine_draw.hpp). A per-step case of profile trtllm
// is the base case on one rank (reference/engines/trtllm/profile.cpp): TP, the model and layer, M
// (the capture buffer's max_num_tokens rows), the forward's row count, and CUDA-graph padding.
//
// The padding is TensorRT-LLM's: CUDAGraphRunner._get_padded_batch
// (tensorrt_llm/_torch/pyexecutor/cuda_graph_runner.py @ 7b437aa) pads a batch that can run a graph
// with dummy generation requests, one row each, up to the smallest captured batch size at or above
// it (_round_up_batch_size), and runs it eagerly, unpadded, above the largest. That is the base
// layout's cudagraph padding over the capture list. A padded batch never exceeds the engine's batch
// size, so the draw keeps every captured size within M; TensorRT-LLM has no DP-max padding on one
// rank, so the draw's preferences never ask for it (the profile's resolution would drop it).
#include <algorithm>

#include "fuzz/engines/trtllm/parts.hpp"
#include "fuzz/generate/engine_draw.hpp"
#include "fuzz/generate/seeded_source.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/profile.hpp"

namespace r3::trtllm {
namespace {

// Expert counts of TensorRT-LLM's MoE models (Mixtral 8, Qwen3 128, DeepSeek-V3 256), then any.
int64_t seeded_experts(Rng& r, int top_k) {
  switch (r.below(4)) {
    case 0: return std::max(top_k, 8);
    case 1: return std::max(top_k, 128);
    case 2: return std::max(top_k, 256);
    default: return r.range(top_k, 256);
  }
}

template <class S>
void draw_model(S& s, const DomainBounds& b, Case& c) {
  c.model.layers = static_cast<int>(s.choose({Field::layers, 0, 1, b.max_layers}, [&](Rng& r) {
    return r.chance(40) ? r.range(1, 2) : r.range(1, b.max_layers);
  }));
  c.model.top_k = static_cast<int>(s.choose({Field::top_k, 0, 1, b.max_top_k}));
  c.model.experts = static_cast<int>(s.choose({Field::experts, 0, c.model.top_k, std::max(c.model.top_k, 256)},
                                              [&](Rng& r) { return seeded_experts(r, c.model.top_k); }));
  c.layer = static_cast<int>(s.choose({Field::layer, 0, 0, c.model.layers - 1}));
}

// The forward's rows: one, all of M, or any count between (a forward has at least one row).
template <class S>
void draw_rows(S& s, Case& c) {
  const int64_t M = c.max_num_tokens;
  c.tokens = {s.choose({Field::tokens, 0, 1, M}, [&](Rng& r) -> int64_t {
    switch (r.below(4)) {
      case 0: return 1;
      case 1: return M;
      default: return r.range(1, M);
    }
  })};
}

// Captured batch sizes: a few increasing sizes within M, the largest sometimes M itself.
void seeded_batch_sizes(Rng& r, int64_t M, std::vector<int64_t>& sizes) {
  const int count = static_cast<int>(r.range(1, 5));
  for (int i = 0; i < count; ++i) sizes.push_back(r.range(1, M));
  if (r.chance(40)) sizes.push_back(M);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
}

template <class S>
void draw_padding(S& s, const DomainBounds& b, Case& c) {
  const bool graphs = b.cudagraph && s.choose({Field::padding, 0, 0, 2}, [](Rng& r) -> int64_t {
    return r.chance(50) ? 2 : 0;
  }) == 2;
  if (!graphs) return;
  c.padding.mode = PaddingMode::cudagraph;
  const int64_t M = c.max_num_tokens;
  s.increasing_list({Field::capture_sizes, 0, 1, std::min(M, b.max_capture_size)},
                    std::min(b.max_custom_capture_sizes, b.max_capture_sizes), b.max_capture_sizes,
                    [&](Rng& r, std::vector<int64_t>& sizes) { seeded_batch_sizes(r, M, sizes); },
                    c.padding.cudagraph_sizes);
}

template <class S>
Case draw_case(S& s, const CaseDomain& d) {
  const DomainBounds& b = d.bounds;
  Case c;
  c.engine = trtllm::engine();
  c.topology.tp = static_cast<int>(s.choose({Field::tp, 0, 1, std::max(1, b.max_tp)}, [&](Rng& r) -> int64_t {
    return std::min<int64_t>(r.pick({1, 2, 4, 8}), std::max(1, b.max_tp));
  }));
  draw_model(s, b, c);
  c.max_num_tokens = s.choose({Field::max_num_tokens, 0, 1, b.max_tokens},
                              [&](Rng& r) { return r.chance(20) ? b.max_tokens : r.range(1, b.max_tokens); });
  draw_rows(s, c);
  draw_padding(s, b, c);
  if (d.profile.is_any()) return c;
  return r3::fit_to_profile(std::move(c), d.profile);
}

class Draw final : public EngineDraw {
 public:
  Case draw(Source& source, const CaseDomain& domain) const override { return draw_case(source, domain); }
  Case draw(SeededSource& source, const CaseDomain& domain) const override { return draw_case(source, domain); }
};

}  // namespace

const EngineDraw& draw_part() {
  static const Draw part;
  return part;
}

}  // namespace r3::trtllm
