#include "fuzz/shrink/passes.hpp"

#include <algorithm>
#include <functional>

#include "fuzz/shrink/engine_shrink.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

using Candidates = std::vector<Case>;

// One candidate per value below `value`, toward the field's lowest value in the case domain,
// most-reducing first: `set` writes it into a copy of the case.
template <class Set>
void each_smaller(const Case& c, int64_t value, Field field, Candidates& out, Set set) {
  for (int64_t v : smaller_values(value, lowest_value(field, c.engine))) {
    Case next = c;
    set(next, v);
    out.push_back(std::move(next));
  }
}

// Removing whole DP ranks first: "DP2" is the first thing a reader looks at.
void fewer_dp_ranks(const Case& c, Candidates& out) {
  for (auto [begin, end] : removable_chunks(c.tokens.size())) {
    Case next = c;
    next.tokens.erase(next.tokens.begin() + static_cast<std::ptrdiff_t>(begin),
                      next.tokens.begin() + static_cast<std::ptrdiff_t>(end));
    next.topology.dp = static_cast<int>(next.tokens.size());
    out.push_back(std::move(next));
  }
}

// TP size, keeping SP valid (SP needs tp > 1): where the smaller TP would break SP and the
// path does not need SP, the candidate drops SP too. Then SP and EP themselves.
void smaller_tp(const Case& c, Candidates& out) {
  each_smaller(c, c.topology.tp, Field::tp, out, [&](Case& next, int64_t tp) {
    next.topology.tp = static_cast<int>(tp);
    if (next.topology.sp && tp < 2 && c.path != Path::sp_shard) next.topology.sp = false;
  });
  if (c.topology.sp) {
    Case next = c;
    next.topology.sp = false;
    out.push_back(std::move(next));
  }
  if (c.topology.ep && !c.topology.sp) {
    Case next = c;
    next.topology.ep = false;
    out.push_back(std::move(next));
  }
}

// All ranks at once (clamped to a common bound), then each rank on its own, then the ranks
// in canonical order.
void fewer_tokens(const Case& c, Candidates& out) {
  const int64_t most = c.tokens.empty() ? 0 : *std::max_element(c.tokens.begin(), c.tokens.end());
  for (int64_t bound : smaller_values(most, lowest_value(Field::tokens, c.engine))) {
    Case next = c;
    for (int64_t& t : next.tokens) t = std::min(t, bound);
    if (next.tokens != c.tokens) out.push_back(std::move(next));
  }
  for (size_t d = 0; d < c.tokens.size(); ++d) {
    each_smaller(c, c.tokens[d], Field::tokens, out, [d](Case& next, int64_t t) { next.tokens[d] = t; });
  }
  // Busiest rank first: of two mirror-image cases the reader gets "tokens [1, 0]". Sorting
  // keeps the sum and removes inversions, so it cannot undo a reduction: no cycles.
  if (!std::is_sorted(c.tokens.begin(), c.tokens.end(), std::greater<>())) {
    Case next = c;
    std::sort(next.tokens.begin(), next.tokens.end(), std::greater<>());
    out.push_back(std::move(next));
  }
}

// M, with the token counts clamped under it (the scheduler never exceeds M).
void smaller_max_num_tokens(const Case& c, Candidates& out) {
  each_smaller(c, c.max_num_tokens, Field::max_num_tokens, out, [](Case& next, int64_t m) {
    next.max_num_tokens = m;
    for (int64_t& t : next.tokens) t = std::min(t, m);
  });
}

// The captured layer toward 0, then the layer count toward 1 (layer stays below it).
void fewer_layers(const Case& c, Candidates& out) {
  each_smaller(c, c.layer, Field::layer, out, [](Case& next, int64_t layer) { next.layer = static_cast<int>(layer); });
  each_smaller(c, c.model.layers, Field::layers, out, [](Case& next, int64_t layers) {
    next.model.layers = static_cast<int>(layers);
    next.layer = std::min(next.layer, next.model.layers - 1);
  });
}

// top-k toward 1, then experts toward 1 (top-k stays within them).
void smaller_model(const Case& c, Candidates& out) {
  each_smaller(c, c.model.top_k, Field::top_k, out, [](Case& next, int64_t k) { next.model.top_k = static_cast<int>(k); });
  each_smaller(c, c.model.experts, Field::experts, out, [](Case& next, int64_t e) {
    next.model.experts = static_cast<int>(e);
    next.model.top_k = std::min(next.model.top_k, next.model.experts);
  });
}

// cudagraph -> dp_max -> none (keeping the counts, or turning padded rows into real tokens);
// then fewer and lower CUDA-graph capture sizes.
void simpler_padding(const Case& c, Candidates& out) {
  auto with_mode = [&](PaddingMode mode) {
    Case next = c;
    next.padding = Padding{mode, {}};
    // Leaving dp_max padding leaves micro-batching too.
    if (!can_microbatch(next)) next.microbatches = 1;
    out.push_back(std::move(next));
  };
  if (c.padding.mode != PaddingMode::none) {
    with_mode(PaddingMode::none);
    // The same counts without padding: dummy tokens become real ones. Padding never comes
    // back, so the larger token counts cannot start a cycle.
    Case unpadded = c;
    unpadded.padding = Padding{};
    unpadded.microbatches = 1;
    unpadded.tokens = derive_num_tokens_across_dp(c);
    if (unpadded.tokens != c.tokens) out.push_back(std::move(unpadded));
  }
  if (c.padding.mode == PaddingMode::cudagraph) with_mode(PaddingMode::dp_max);
  if (c.padding.mode != PaddingMode::cudagraph) return;
  const auto& sizes = c.padding.cudagraph_sizes;
  for (auto [begin, end] : removable_chunks(sizes.size())) {
    Case next = c;
    auto& s = next.padding.cudagraph_sizes;
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(begin), s.begin() + static_cast<std::ptrdiff_t>(end));
    out.push_back(std::move(next));
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t least = i == 0 ? lowest_value(Field::capture_sizes, c.engine) : sizes[i - 1] + 1;
    for (int64_t size : smaller_values(sizes[i], least)) {
      Case next = c;
      next.padding.cudagraph_sizes[i] = size;
      out.push_back(std::move(next));
    }
  }
}

// One capture call per layer is the simplest step: micro-batches toward 1, DP chunking off,
// then a smaller chunk size.
void fewer_calls(const Case& c, Candidates& out) {
  each_smaller(c, c.microbatches, Field::microbatches, out,
               [](Case& next, int64_t u) { next.microbatches = static_cast<int>(u); });
  if (!c.dp_chunk) return;
  Case unchunked = c;
  unchunked.dp_chunk.reset();
  out.push_back(std::move(unchunked));
  each_smaller(c, *c.dp_chunk, Field::dp_chunk, out, [](Case& next, int64_t chunk) { next.dp_chunk = chunk; });
}

// An idle rank's dummy token is one more thing to read: off when the bug survives without it
// (a vLLM profile keeps it wherever dp > 1).
void no_idle_dummy(const Case& c, Candidates& out) {
  if (!c.idle_dummy) return;
  Case next = c;
  next.idle_dummy = false;
  out.push_back(std::move(next));
}

void not_monolithic(const Case& c, Candidates& out) {
  if (!c.monolithic) return;
  Case next = c;
  next.monolithic = false;
  out.push_back(std::move(next));
}

int path_rank(Path p) {
  switch (p) {
    case Path::single: return 0;
    case Path::local: return 1;
    case Path::gathered: return 2;
    case Path::sp_shard: return 3;
  }
  return 4;
}

// Toward single (one DP rank, no metadata), then local, then gathered.
void simpler_path(const Case& c, Candidates& out) {
  if (path_rank(c.path) > path_rank(Path::single)) {
    for (size_t d = 0; d < c.tokens.size(); ++d) {
      Case next = c;
      next.path = Path::single;
      next.tokens = {c.tokens[d]};
      next.topology.dp = 1;
      next.topology.sp = false;
      next.microbatches = 1;
      next.dp_chunk.reset();
      next.metadata.reset();
      out.push_back(std::move(next));
    }
  }
  for (Path p : {Path::local, Path::gathered}) {
    if (path_rank(p) >= path_rank(c.path)) continue;
    Case next = c;
    next.path = p;
    next.topology.sp = false;
    if (p == Path::local) next.monolithic = false;
    if (p == Path::gathered) next.dp_chunk.reset();
    out.push_back(std::move(next));
  }
}

void shorter_list(const std::vector<int64_t>& list, const Case& c, std::vector<int64_t>& (*field)(Case&),
                  Candidates& out) {
  for (auto [begin, end] : removable_chunks(list.size())) {
    Case next = c;
    auto& l = field(next);
    l.erase(l.begin() + static_cast<std::ptrdiff_t>(begin), l.begin() + static_cast<std::ptrdiff_t>(end));
    out.push_back(std::move(next));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    for (int64_t v : smaller_values(list[i], 0)) {
      Case next = c;
      field(next)[i] = v;
      out.push_back(std::move(next));
    }
  }
}

// A metadata override is dropped when the bug survives without it; otherwise each field
// goes back to derived, then its lists get shorter and their entries smaller.
void simpler_metadata(const Case& c, Candidates& out) {
  if (!c.metadata) return;
  Case derived = c;
  derived.metadata.reset();
  out.push_back(std::move(derived));
  const MetadataOverride& m = *c.metadata;
  if (m.num_tokens_across_dp) {
    Case next = c;
    next.metadata->num_tokens_across_dp.reset();
    out.push_back(std::move(next));
    shorter_list(*m.num_tokens_across_dp, c, [](Case& x) -> std::vector<int64_t>& {
      return *x.metadata->num_tokens_across_dp;
    }, out);
  }
  if (m.local_sizes_given) {
    Case next = c;
    next.metadata->local_sizes_given = false;
    next.metadata->local_sizes.reset();
    out.push_back(std::move(next));
  }
  if (m.local_sizes) {
    shorter_list(*m.local_sizes, c, [](Case& x) -> std::vector<int64_t>& { return *x.metadata->local_sizes; }, out);
  }
}

}  // namespace

std::vector<int64_t> smaller_values(int64_t value, int64_t target) {
  std::vector<int64_t> out;
  if (value <= target) return out;
  out.push_back(target);
  for (int64_t gap = (value - target) / 2; gap > 0; gap /= 2) {
    if (value - gap != out.back()) out.push_back(value - gap);
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> removable_chunks(size_t size) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t chunk = size; chunk > 0; chunk /= 2) {
    for (size_t begin = 0; begin < size; begin += chunk) out.emplace_back(begin, std::min(size, begin + chunk));
  }
  return out;
}

void append_base_passes(std::vector<ShrinkPass>& passes, bool allow_path_change) {
  passes.insert(passes.end(), {
                                  {"dp", CasePart::topology, fewer_dp_ranks},
                                  {"tp", CasePart::topology, smaller_tp},
                                  {"tokens", CasePart::tokens, fewer_tokens},
                                  {"max_num_tokens", CasePart::max_num_tokens, smaller_max_num_tokens},
                              });
  append_model_passes(passes);
  passes.insert(passes.end(), {
                                  {"padding", CasePart::padding, simpler_padding},
                                  {"calls", CasePart::calls, fewer_calls},
                                  {"monolithic", CasePart::path, not_monolithic},
                                  {"idle_dummy", CasePart::idle_dummy, no_idle_dummy},
                              });
  if (allow_path_change) passes.push_back({"path", CasePart::path, simpler_path});
  passes.push_back({"metadata", CasePart::metadata, simpler_metadata});
}

void append_model_passes(std::vector<ShrinkPass>& passes) {
  passes.push_back({"layers", CasePart::model, fewer_layers});
  passes.push_back({"model", CasePart::model, smaller_model});
}

std::vector<ShrinkPass> shrink_passes(Engine engine, bool allow_path_change) {
  std::vector<ShrinkPass> passes;
  if (const EngineShrink* part = engine_shrink(engine)) part->append_passes(passes, allow_path_change);
  return passes;
}

}  // namespace r3
