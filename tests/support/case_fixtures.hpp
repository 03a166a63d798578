// Small hand-written cases for unit tests: one call names the layout, the rest defaults to
// a 4-layer, top-2, 64-expert model at layer 1 with no padding.
#pragma once

#include <utility>
#include <vector>

#include "reference/case.hpp"

namespace r3::test {

inline Case make_case(Topology topology, int64_t max_num_tokens, std::vector<int64_t> tokens, Path path,
                      bool monolithic = false) {
  Case c;
  c.topology = topology;
  c.model = {4, 2, 64};
  c.max_num_tokens = max_num_tokens;
  c.tokens = std::move(tokens);
  c.path = path;
  c.monolithic = monolithic;
  c.layer = 1;
  return c;
}

// `c` with a model shape (L, K, E) and capture layer of the test's own, for tests whose rows or
// bytes depend on them.
inline Case with_model_at_layer(Case c, ModelShape model, int layer) {
  c.model = model;
  c.layer = layer;
  return c;
}

// The smallest SP case: DP2/TP2 with EP and SP, tokens [1, 0] on the gathered path, every other
// field at its default (M = 1, L = K = E = 1, layer 0): where shrinking an SP failure ends.
inline Case smallest_sp_gathered_case() {
  Case c;
  c.topology = {2, 2, true, true};
  c.tokens = {1, 0};
  c.path = Path::gathered;
  return c;
}

inline constexpr Topology kSingle{1, 1, false, false};
inline constexpr Topology kDp2{2, 1, false, false};
inline constexpr Topology kDp2Tp2Ep{2, 2, true, false};
inline constexpr Topology kDp2Tp2EpSp{2, 2, true, true};

// The #50874 deployment: TP2/DP2 with EP and SP, M = 8192, full batches, gathered, monolithic.
inline Case vllm_50874_deployment() {
  Case c = make_case(kDp2Tp2EpSp, 8192, {8192, 8192}, Path::gathered, true);
  c.model = {61, 8, 256};
  c.layer = 0;
  return c;
}

}  // namespace r3::test
