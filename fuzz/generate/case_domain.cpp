#include "fuzz/generate/case_domain.hpp"

#include <algorithm>

#include "fuzz/generate/seeded_source.hpp"
#include "fuzz/generate/sglang_draw.hpp"
#include "reference/layout.hpp"

namespace r3 {
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
    const std::vector<int64_t>& sizes = vllm_default_cudagraph_sizes();
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
      if (d.profile == Profile::any) return;
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
  if (d.profile != Profile::any) return;
  if (d.bounds.metadata_overrides && c.microbatches == 1 && !c.dp_chunk &&
      flag(s, Field::metadata, [](Rng& r) -> int64_t { return r.chance(15); })) {
    draw_metadata(s, c);
  }
  if (!c.metadata && c.topology.dp > 1) c.idle_dummy = flag(s, Field::idle_dummy, [](Rng& r) -> int64_t { return r.chance(25); });
}

}  // namespace

void Source::increasing_list(const Choice& entries, int fresh_count, int, SeededList, std::vector<int64_t>& out) {
  const int64_t room = entries.hi - entries.lo + 1;
  const int64_t count = choose({entries.field, 0, 1, std::min<int64_t>(fresh_count, room)});
  out.clear();
  int64_t next = entries.lo;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t value = choose({entries.field, static_cast<size_t>(i) + 1, next, entries.hi - (count - 1 - i)});
    out.push_back(value);
    next = value + 1;
  }
}

const std::array<FieldInfo, kFieldCount>& case_fields() {
  static constexpr std::array<FieldInfo, kFieldCount> kFields = {{
      {Field::tp, "tp", CasePart::topology},
      {Field::dp, "dp", CasePart::topology},
      {Field::ep, "ep", CasePart::topology},
      {Field::sp, "sp", CasePart::topology},
      {Field::layers, "layers", CasePart::model},
      {Field::top_k, "top_k", CasePart::model},
      {Field::experts, "experts", CasePart::model},
      {Field::layer, "layer", CasePart::model},
      {Field::max_num_tokens, "max_num_tokens", CasePart::max_num_tokens},
      {Field::token_shape, "token_shape", CasePart::tokens},
      {Field::token_holder, "token_holder", CasePart::tokens},
      {Field::tokens, "tokens", CasePart::tokens},
      {Field::padding, "padding", CasePart::padding},
      {Field::default_capture_sizes, "default_capture_sizes", CasePart::padding},
      {Field::capture_sizes, "capture_sizes", CasePart::padding},
      {Field::path, "path", CasePart::path},
      {Field::monolithic, "monolithic", CasePart::path},
      {Field::microbatches, "microbatches", CasePart::calls},
      {Field::chunked, "chunked", CasePart::calls},
      {Field::dp_chunk, "dp_chunk", CasePart::calls},
      {Field::metadata, "metadata", CasePart::metadata},
      {Field::metadata_kind, "metadata_kind", CasePart::metadata},
      {Field::metadata_edit, "metadata_edit", CasePart::metadata},
      {Field::idle_dummy, "idle_dummy", CasePart::idle_dummy},
      // SGLang's fields, each in the part that plays its role in a vLLM case: the forward kind
      // is where capture sees the tensor (path), the graphs pad (padding), TBO makes the calls.
      {Field::engine, "engine", CasePart::topology},
      {Field::dp_attention, "dp_attention", CasePart::topology},
      {Field::a2a, "a2a", CasePart::topology},
      {Field::forward, "forward", CasePart::path},
      {Field::spec_width, "spec_width", CasePart::path},
      {Field::max_running_requests, "max_running_requests", CasePart::max_num_tokens},
      {Field::chunked_prefill, "chunked_prefill", CasePart::max_num_tokens},
      {Field::chunked_prefill_size, "chunked_prefill_size", CasePart::max_num_tokens},
      {Field::requests, "requests", CasePart::tokens},
      {Field::cuda_graph, "cuda_graph", CasePart::padding},
      {Field::decode_buckets, "decode_buckets", CasePart::padding},
      {Field::prefill_graph, "prefill_graph", CasePart::padding},
      {Field::prefill_buckets, "prefill_buckets", CasePart::padding},
      {Field::last_decode_bucket, "last_decode_bucket", CasePart::padding},
      {Field::tbo, "tbo", CasePart::calls},
  }};
  return kFields;
}

std::string_view to_string(Field field) { return case_fields()[static_cast<size_t>(field)].name; }

namespace {

// The choice an SGLang case records for one of SGLang's fields (nullopt on a vLLM case).
std::optional<int64_t> recorded_sglang_choice(const Case& c, Field field, size_t index) {
  if (!c.sglang) return std::nullopt;
  const sglang::Forward& f = *c.sglang;
  switch (field) {
    case Field::dp_attention: return f.dp_attention;
    case Field::a2a: return static_cast<int64_t>(f.a2a);
    case Field::forward: return static_cast<int64_t>(f.kind);
    case Field::spec_width: return f.spec_width;
    case Field::max_running_requests: return f.max_running_requests;
    case Field::chunked_prefill: return f.chunked_prefill_size != -1;
    case Field::chunked_prefill_size: return f.chunked_prefill_size == -1 ? std::nullopt : std::optional(f.chunked_prefill_size);
    case Field::requests:
      if (f.requests.empty()) return std::nullopt;
      return f.requests[std::min(index, f.requests.size() - 1)];
    case Field::cuda_graph: return f.cuda_graph.has_value();
    case Field::prefill_graph: return f.cuda_graph && !f.cuda_graph->prefill.empty();
    case Field::last_decode_bucket: {
      if (!f.cuda_graph || !f.last_decode_bucket) return 0;
      const auto& d = f.cuda_graph->decode;
      return static_cast<int64_t>(std::find(d.begin(), d.end(), *f.last_decode_bucket) - d.begin()) + 1;
    }
    case Field::tbo: return f.tbo;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<Engine> fixed_engine(const CaseDomain& domain) {
  if (domain.profile != Profile::any) return engine_of(domain.profile);
  return domain.engine;
}

std::optional<int64_t> recorded_choice(const Case& c, Field field, size_t index) {
  switch (field) {
    case Field::engine: return static_cast<int64_t>(c.engine);
    case Field::dp_attention:
    case Field::a2a:
    case Field::forward:
    case Field::spec_width:
    case Field::max_running_requests:
    case Field::chunked_prefill:
    case Field::chunked_prefill_size:
    case Field::requests:
    case Field::cuda_graph:
    case Field::prefill_graph:
    case Field::last_decode_bucket:
    case Field::tbo: return recorded_sglang_choice(c, field, index);
    case Field::decode_buckets:   // lists: replay_source.cpp replays them whole
    case Field::prefill_buckets: return std::nullopt;
    case Field::tp: return c.topology.tp;
    case Field::dp: return c.topology.dp;
    case Field::ep: return c.topology.ep;
    case Field::sp: return c.topology.sp;
    case Field::layers: return c.model.layers;
    case Field::top_k: return c.model.top_k;
    case Field::experts: return c.model.experts;
    case Field::layer: return c.layer;
    case Field::max_num_tokens: return c.max_num_tokens;
    case Field::tokens:  // a rank the case lacks takes the last rank's count
      if (c.tokens.empty()) return std::nullopt;
      return c.tokens[std::min(index, c.tokens.size() - 1)];
    case Field::padding: return static_cast<int64_t>(c.padding.mode);
    case Field::path: return c.path == Path::local || c.path == Path::sp_shard;
    case Field::monolithic: return c.monolithic;
    case Field::microbatches: return c.microbatches;
    case Field::chunked: return c.dp_chunk.has_value();
    case Field::dp_chunk: return c.dp_chunk;
    case Field::metadata: return c.metadata.has_value();
    case Field::idle_dummy: return c.idle_dummy;
    case Field::default_capture_sizes: {  // vLLM's list, or its first entries (bounds cut the rest)
      const auto& sizes = c.padding.cudagraph_sizes;
      const auto& defaults = vllm_default_cudagraph_sizes();
      return !sizes.empty() && sizes.size() <= defaults.size() && std::equal(sizes.begin(), sizes.end(), defaults.begin());
    }
    case Field::token_shape:
    case Field::token_holder:
    case Field::capture_sizes:  // a list: replay_source.cpp replays it whole
    case Field::metadata_kind:
    case Field::metadata_edit: return std::nullopt;
  }
  return std::nullopt;
}

// In SizeClass order.
constexpr std::array<std::string_view, 3> kSizeClassNames = {"tiny", "small", "production"};

std::string_view to_string(SizeClass size) { return kSizeClassNames[static_cast<size_t>(size)]; }

Result<SizeClass> parse_size_class(std::string_view text) {
  for (size_t i = 0; i < kSizeClassNames.size(); ++i) {
    if (text == kSizeClassNames[i]) return static_cast<SizeClass>(i);
  }
  return Error{"size: \"" + std::string(text) + "\" is not one of tiny, small, production"};
}

bool can_microbatch(const Case& c) { return c.topology.dp > 1 && c.padding.mode == PaddingMode::dp_max; }

int64_t lowest_value(Field field) {
  switch (field) {
    case Field::tp:
    case Field::dp:
    case Field::layers:
    case Field::top_k:
    case Field::experts:
    case Field::max_num_tokens:
    case Field::capture_sizes:
    case Field::microbatches:
    case Field::dp_chunk:
    case Field::spec_width:
    case Field::max_running_requests:
    case Field::chunked_prefill_size:
    case Field::decode_buckets:
    case Field::prefill_buckets: return 1;
    default: return 0;
  }
}

int64_t smallest_dp_chunk(const Case& c, int64_t max_chunks) {
  return std::max<int64_t>(1, ceil_div(most_rows_to_chunk(c), max_chunks));
}

const std::vector<int64_t>& vllm_default_cudagraph_sizes() {
  static const std::vector<int64_t> sizes = [] {
    std::vector<int64_t> v = {1, 2, 4};
    for (int64_t s = 8; s < 256; s += 8) v.push_back(s);
    for (int64_t s = 256; s <= 512; s += 16) v.push_back(s);
    return v;
  }();
  return sizes;
}

namespace {

// Whether the next case is SGLang's: fixed by the profile or the domain, else chosen.
template <class S>
bool draws_sglang(S& source, const CaseDomain& domain) {
  if (std::optional<Engine> engine = fixed_engine(domain)) return *engine == Engine::sglang;
  return source.choose({Field::engine, 0, 0, 1}, [](Rng& r) -> int64_t { return r.chance(35); }) == 1;
}

template <class S>
Case draw_case(S& source, const CaseDomain& domain) {
  if (draws_sglang(source, domain)) return detail::draw_sglang_case(source, domain);
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
  if (domain.profile == Profile::any) return c;
  // The profile's resolution (reference/profile.hpp): CUDA-graph sizes above M clamped as vLLM
  // clamps a configured list, idle ranks given their dummy token, a step with no token at all
  // given one, micro-batching dropped where a rank would vote against it.
  return fit_to_profile(std::move(c), domain.profile);
}

}  // namespace

Case draw(Source& source, const CaseDomain& domain) { return draw_case(source, domain); }
Case draw(SeededSource& source, const CaseDomain& domain) { return draw_case(source, domain); }

}  // namespace r3
