#include "fuzz/libfuzzer/mutator.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "reference/layout.hpp"
#include "reference/limits.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

int64_t pick(MutatorRng& rng, int64_t lo, int64_t hi) {  // uniform in [lo, hi]
  if (hi <= lo) return lo;
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

template <class T>
T pick_of(MutatorRng& rng, const std::vector<T>& options) {
  return options[static_cast<size_t>(rng() % options.size())];
}

bool coin(MutatorRng& rng) { return rng() & 1u; }

// ---- repair, in dependency order -------------------------------------------------------

void repair_topology(Case& c, const BinaryLimits& l) {
  c.topology.dp = static_cast<int>(std::clamp<int64_t>(c.topology.dp, 1, l.max_dp));
  c.topology.tp = static_cast<int>(std::clamp<int64_t>(c.topology.tp, 1, l.max_tp));
  if (c.topology.sp && (!c.topology.ep || c.topology.tp < 2 || c.topology.dp < 2)) c.topology.sp = false;
}

void repair_model(Case& c, const BinaryLimits& l) {
  c.model.layers = static_cast<int>(std::clamp<int64_t>(c.model.layers, 1, l.max_layers));
  c.model.experts = static_cast<int>(std::clamp<int64_t>(c.model.experts, 1, l.max_experts));
  c.model.top_k = static_cast<int>(std::clamp<int64_t>(c.model.top_k, 1, std::min(l.max_top_k, c.model.experts)));
  c.layer = static_cast<int>(std::clamp<int64_t>(c.layer, 0, c.model.layers - 1));
}

void repair_tokens(Case& c, const BinaryLimits& l) {
  c.max_num_tokens = std::clamp<int64_t>(c.max_num_tokens, 1, l.max_rows);
  c.tokens.resize(static_cast<size_t>(c.topology.dp), c.tokens.empty() ? 0 : c.tokens.back());
  for (int64_t& t : c.tokens) t = std::clamp<int64_t>(t, 0, c.max_num_tokens);
}

void repair_padding(Case& c, const BinaryLimits& l) {
  if (c.padding.mode != PaddingMode::cudagraph) {
    c.padding.cudagraph_sizes.clear();
    return;
  }
  std::set<int64_t> sizes;
  for (int64_t s : c.padding.cudagraph_sizes) sizes.insert(std::clamp<int64_t>(s, 1, l.max_cudagraph_size));
  c.padding.cudagraph_sizes.assign(sizes.begin(), sizes.end());
  if (c.padding.cudagraph_sizes.size() > static_cast<size_t>(l.max_cudagraph_sizes)) {
    c.padding.cudagraph_sizes.resize(static_cast<size_t>(l.max_cudagraph_sizes));
  }
  if (c.padding.cudagraph_sizes.empty()) c.padding.mode = PaddingMode::none;
}

void repair_path(Case& c) {
  const Topology& t = c.topology;
  if (t.dp == 1) c.path = Path::single;
  else if (c.path == Path::single) c.path = Path::gathered;
  if (c.path == Path::sp_shard && !t.sp) c.path = Path::local;
  if (c.path == Path::local && t.sp) c.path = Path::sp_shard;
  if (c.path == Path::local || c.path == Path::sp_shard) c.monolithic = false;
}

void repair_calls(Case& c, const BinaryLimits& l) {
  c.microbatches = static_cast<int>(std::clamp<int64_t>(c.microbatches, 1, l.max_microbatches));
  if (c.topology.dp < 2) c.microbatches = 1;
  if (c.microbatches > 1) {
    c.padding = Padding{PaddingMode::dp_max, {}};
    c.dp_chunk.reset();
  }
  if (c.dp_chunk && c.path != Path::local && c.path != Path::sp_shard) c.dp_chunk.reset();
  if (!c.dp_chunk) return;
  const int64_t fewest_allowed = std::max<int64_t>(1, ceil_div(most_rows_to_chunk(c), limits::kMaxChunks));
  c.dp_chunk = std::clamp<int64_t>(*c.dp_chunk, fewest_allowed, std::max(fewest_allowed, l.max_dp_chunk));
}

void repair_list(std::vector<int64_t>& values, const BinaryLimits& l) {
  if (values.size() > static_cast<size_t>(l.max_metadata_entries)) values.resize(static_cast<size_t>(l.max_metadata_entries));
  for (int64_t& v : values) v = std::clamp<int64_t>(v, 0, l.max_metadata_value);
}

void repair_metadata(Case& c, const BinaryLimits& l) {
  if (!c.metadata) return;
  if (c.microbatches > 1 || c.dp_chunk) {
    c.metadata.reset();
    return;
  }
  MetadataOverride& m = *c.metadata;
  if (m.num_tokens_across_dp) repair_list(*m.num_tokens_across_dp, l);
  if (!m.local_sizes_given) m.local_sizes.reset();
  if (m.local_sizes) repair_list(*m.local_sizes, l);
}

void repair_text(Case& c, const BinaryLimits& l) {
  if (c.note.size() > l.max_text) c.note.clear();
  if (c.expect && std::max({c.expect->impl.size(), to_string(c.expect->verdict).size(), to_string(c.expect->severity).size()}) > l.max_text) {
    c.expect.reset();
  }
}

// ---- mutations ---------------------------------------------------------------------------

// Counts where the contract's corner cases live, for a rank of a case with M rows and TP size T.
std::vector<int64_t> edge_counts(const Case& c, MutatorRng& rng) {
  const int64_t M = c.max_num_tokens;
  const int64_t T = c.topology.tp;
  const int64_t k = pick(rng, 1, std::max<int64_t>(1, M / T + 1));
  std::vector<int64_t> edges = {0, 1, M, M - 1, k * T - 1, k * T, k * T + 1, pick(rng, 0, M)};
  for (int64_t s : c.padding.cudagraph_sizes) {
    for (int64_t delta : {-1, 0, 1}) edges.push_back(s + delta);
  }
  return edges;
}

void mutate_tokens(Case& c, MutatorRng& rng) {
  const size_t d = static_cast<size_t>(rng() % c.tokens.size());
  c.tokens[d] = pick_of(rng, edge_counts(c, rng));
}

void mutate_token_shape(Case& c, MutatorRng& rng) {
  const size_t holder = static_cast<size_t>(rng() % c.tokens.size());
  switch (rng() % 3) {
    case 0: std::fill(c.tokens.begin(), c.tokens.end(), 0); break;  // every rank idle
    case 1:                                                          // one rank holds everything
      std::fill(c.tokens.begin(), c.tokens.end(), 0);
      c.tokens[holder] = pick_of(rng, edge_counts(c, rng));
      break;
    default: std::fill(c.tokens.begin(), c.tokens.end(), c.tokens[holder]); break;
  }
}

void mutate_max_tokens(Case& c, MutatorRng& rng, const BinaryLimits& l) {
  const int64_t T = c.topology.tp;
  const int64_t most = *std::max_element(c.tokens.begin(), c.tokens.end());
  const int64_t k = pick(rng, 1, std::max<int64_t>(1, l.max_rows / T));
  c.max_num_tokens = pick_of(rng, std::vector<int64_t>{most, most + 1, k * T - 1, k * T, k * T + 1, 1, 2,
                                                       pick(rng, 1, l.max_rows)});
}

void mutate_topology_sizes(Case& c, Mutation m, MutatorRng& rng, const BinaryLimits& l) {
  if (m == Mutation::dp) {
    c.topology.dp = static_cast<int>(pick_of(rng, std::vector<int64_t>{1, 2, 3, c.topology.dp + 1,
                                                                        c.topology.dp - 1, pick(rng, 1, l.max_dp)}));
  } else {
    c.topology.tp = static_cast<int>(pick_of(rng, std::vector<int64_t>{1, 2, 3, 4, 6, 8, pick(rng, 1, l.max_tp)}));
  }
}

void mutate_flags(Case& c, MutatorRng& rng) {
  switch (rng() % 5) {
    case 0: c.topology.ep = !c.topology.ep; break;
    case 1: c.topology.sp = !c.topology.sp; break;
    case 2:  // SP needs EP: turning SP on turns EP on too
      c.topology.sp = true;
      c.topology.ep = true;
      if (c.topology.tp < 2) c.topology.tp = 2;
      break;
    case 3: c.monolithic = !c.monolithic; break;
    default: c.idle_dummy = !c.idle_dummy; break;
  }
}

void mutate_path(Case& c, MutatorRng& rng) {
  std::vector<Path> options;
  if (c.topology.dp == 1) options = {Path::single};
  else if (c.topology.sp) options = {Path::gathered, Path::sp_shard};
  else options = {Path::gathered, Path::local};
  c.path = pick_of(rng, options);
  if (c.path == Path::gathered && coin(rng)) c.monolithic = true;
}

// vLLM's default CUDA-graph capture sizes: 1, 2, 4, then every multiple of 8.
std::vector<int64_t> vllm_default_capture_sizes(int64_t largest) {
  std::vector<int64_t> sizes = {1, 2, 4};
  for (int64_t s = 8; s <= largest; s += 8) sizes.push_back(s);
  return sizes;
}

void mutate_padding(Case& c, MutatorRng& rng, const BinaryLimits& l) {
  const int64_t M = c.max_num_tokens;
  switch (rng() % 5) {
    case 0: c.padding = {PaddingMode::none, {}}; break;
    case 1: c.padding = {PaddingMode::dp_max, {}}; break;
    case 2: c.padding = {PaddingMode::cudagraph, vllm_default_capture_sizes(l.max_cudagraph_size)}; break;
    case 3: c.padding = {PaddingMode::cudagraph, {M - 1, M, M + 1, 2 * M}}; break;  // buckets around and above M
    default: {
      std::vector<int64_t> sizes;
      const int64_t count = pick(rng, 1, 4);
      for (int64_t i = 0; i < count; ++i) sizes.push_back(pick(rng, 1, l.max_cudagraph_size));
      c.padding = {PaddingMode::cudagraph, sizes};
    }
  }
}

void mutate_model(Case& c, MutatorRng& rng, const BinaryLimits& l) {
  switch (rng() % 4) {
    case 0: c.layer = c.model.layers - 1; break;
    case 1:
      c.model.layers = static_cast<int>(pick(rng, 1, l.max_layers));
      c.layer = coin(rng) ? c.model.layers - 1 : 0;
      break;
    case 2: c.model.top_k = static_cast<int>(pick_of(rng, std::vector<int64_t>{1, 2, l.max_top_k})); break;
    default:  // narrow storage: int16 holds ids up to 32767
      c.model.experts = static_cast<int>(pick_of(rng, std::vector<int64_t>{8, 256, 32767, 32768, 40000, l.max_experts}));
  }
}

void mutate_dp_chunk(Case& c, MutatorRng& rng, const BinaryLimits& l) {
  if (c.dp_chunk && coin(rng)) {
    c.dp_chunk.reset();
    return;
  }
  if (c.topology.dp > 1) c.path = c.topology.sp ? Path::sp_shard : Path::local;
  c.microbatches = 1;
  c.metadata.reset();
  const std::vector<int64_t> n = derive_num_tokens_across_dp(c);
  const int64_t nd = n[static_cast<size_t>(rng() % n.size())];
  const int64_t rows = c.topology.sp ? ceil_div(nd, c.topology.tp) : nd;
  c.dp_chunk = pick_of(rng, std::vector<int64_t>{1, 2, rows - 1, rows, rows + 1, std::max<int64_t>(1, rows / 2),
                                                 pick(rng, 1, l.max_dp_chunk)});
}

void perturb(std::vector<int64_t>& values, MutatorRng& rng) {
  switch (rng() % 3) {
    case 0: values.push_back(values.empty() ? 1 : values.back()); break;  // one entry too many
    case 1: if (!values.empty()) values.pop_back(); break;                // one entry too few
    default:
      if (!values.empty()) {
        int64_t& v = values[static_cast<size_t>(rng() % values.size())];
        v = std::max<int64_t>(0, v + (coin(rng) ? 1 : -1));
      }
  }
}

void mutate_metadata(Case& c, MutatorRng& rng, const BinaryLimits& l) {
  if (c.metadata && coin(rng)) {
    c.metadata.reset();
    return;
  }
  c.microbatches = 1;
  c.dp_chunk.reset();
  repair_calls(c, l);
  Case plain = c;
  plain.metadata.reset();
  auto step = derive_step(plain);
  if (!step) return;
  MetadataOverride m;
  m.num_tokens_across_dp = step->num_tokens_across_dp;
  m.local_sizes_given = true;
  m.local_sizes = step->local_sizes;
  switch (rng() % 5) {
    case 0: break;                                                  // exactly the derived metadata
    case 1: perturb(*m.num_tokens_across_dp, rng); break;
    case 2: m.local_sizes.reset(); break;                          // local_sizes never set
    case 3: if (m.local_sizes) perturb(*m.local_sizes, rng); break;
    default: m.local_sizes = step->num_tokens_across_dp; break;    // SP-off layout on an SP step
  }
  c.metadata = std::move(m);
}

void apply(Case& c, Mutation m, MutatorRng& rng, const BinaryLimits& l) {
  switch (m) {
    case Mutation::dp:
    case Mutation::tp: mutate_topology_sizes(c, m, rng, l); break;
    case Mutation::flags: mutate_flags(c, rng); break;
    case Mutation::tokens: mutate_tokens(c, rng); break;
    case Mutation::token_shape: mutate_token_shape(c, rng); break;
    case Mutation::max_tokens: mutate_max_tokens(c, rng, l); break;
    case Mutation::path: mutate_path(c, rng); break;
    case Mutation::padding: mutate_padding(c, rng, l); break;
    case Mutation::model: mutate_model(c, rng, l); break;
    case Mutation::microbatches:
      c.microbatches = static_cast<int>(pick(rng, 1, l.max_microbatches));
      if (c.microbatches > 1 && c.topology.dp < 2) c.topology.dp = 2;
      break;
    case Mutation::dp_chunk: mutate_dp_chunk(c, rng, l); break;
    case Mutation::metadata: mutate_metadata(c, rng, l); break;
  }
}

size_t write_if_fits(const Case& c, uint8_t* out, size_t max_size, size_t fallback) {
  const std::vector<uint8_t> bytes = case_to_binary(c);
  if (bytes.size() > max_size) return fallback;
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

}  // namespace

std::string_view to_string(Mutation m) {
  static constexpr std::string_view kNames[kMutationCount] = {
      "dp", "tp", "flags", "tokens", "token_shape", "max_tokens", "path", "padding", "model", "microbatches",
      "dp_chunk", "metadata"};
  return kNames[static_cast<int>(m)];
}

Case repair(Case c, const BinaryLimits& limits) {
  repair_topology(c, limits);
  repair_model(c, limits);
  repair_tokens(c, limits);
  repair_padding(c, limits);
  repair_path(c);
  repair_calls(c, limits);
  repair_metadata(c, limits);
  repair_text(c, limits);
  const Status valid = validate(c);
  R3_CHECK(valid.ok(), "repair() must produce a valid case");
  return c;
}

Case mutate(const Case& c, Mutation m, MutatorRng& rng, const BinaryLimits& limits, Profile profile) {
  Case out = repair(c, limits);
  apply(out, m, rng, limits);
  return fit_to_profile(repair(std::move(out), limits), profile);
}

Case mutate(const Case& c, MutatorRng& rng, const BinaryLimits& limits, Profile profile) {
  return mutate(c, static_cast<Mutation>(rng() % kMutationCount), rng, limits, profile);
}

Case cross_over(const Case& a, const Case& b, MutatorRng& rng, const BinaryLimits& limits, Profile profile) {
  Case c = a;
  if (coin(rng)) c.topology = b.topology;
  if (coin(rng)) {
    c.model = b.model;
    c.layer = b.layer;
  }
  if (coin(rng)) c.max_num_tokens = b.max_num_tokens;
  if (coin(rng)) c.tokens = b.tokens;
  if (coin(rng)) c.padding = b.padding;
  if (coin(rng)) {
    c.path = b.path;
    c.monolithic = b.monolithic;
  }
  if (coin(rng)) {
    c.microbatches = b.microbatches;
    c.dp_chunk = b.dp_chunk;
  }
  if (coin(rng)) c.metadata = b.metadata;
  if (coin(rng)) c.idle_dummy = b.idle_dummy;
  return fit_to_profile(repair(std::move(c), limits), profile);
}

Case starting_case() {
  Case c;
  c.topology = {2, 2, true, true};
  c.model = {1, 1, 8};
  c.max_num_tokens = 4;
  c.tokens = {3, 1};
  c.path = Path::gathered;
  return c;
}

size_t mutate_bytes(uint8_t* data, size_t size, size_t max_size, unsigned int seed, const BinaryLimits& limits,
                    Profile profile) {
  MutatorRng rng(seed);
  auto decoded = case_from_binary(std::span<const uint8_t>(data, size), limits);
  const Case from = decoded ? *decoded : starting_case();
  return write_if_fits(mutate(from, rng, limits, profile), data, max_size, size);
}

size_t cross_over_bytes(std::span<const uint8_t> a, std::span<const uint8_t> b, uint8_t* out, size_t max_size,
                        unsigned int seed, const BinaryLimits& limits, Profile profile) {
  MutatorRng rng(seed);
  auto ca = case_from_binary(a, limits);
  auto cb = case_from_binary(b, limits);
  const Case first = ca ? *ca : starting_case();
  const Case second = cb ? *cb : starting_case();
  return write_if_fits(cross_over(first, second, rng, limits, profile), out, max_size, 0);
}

}  // namespace r3
