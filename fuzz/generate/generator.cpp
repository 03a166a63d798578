#include "fuzz/generate/generator.hpp"

#include <algorithm>

#include "fuzz/generate/rng.hpp"
#include "reference/layout.hpp"
#include "reference/limits.hpp"

namespace r3 {
namespace {

struct Bounds {
  int max_dp;
  int max_ranks;  // D*T, so concrete runs stay cheap
  int64_t max_tokens;
  int max_layers;
  int max_top_k;
  int max_chunks;  // DP chunks per step
};

Bounds bounds_of(SizeClass size) {
  switch (size) {
    case SizeClass::tiny: return {4, 16, 16, 4, 2, 16};
    case SizeClass::small: return {8, 16, 64, 4, 4, 64};
    case SizeClass::production: return {64, 64 * 8, 65536, 128, 8, 16};
  }
  return {1, 1, 1, 1, 1, 1};
}

int64_t pick_max_tokens(Rng& rng, SizeClass size, int tp) {
  if (size == SizeClass::production) {
    if (rng.chance(10)) return rng.range(16385, 65536);
    const int64_t m = rng.log_range(16384);
    return rng.chance(30) ? std::max<int64_t>(tp, m - m % tp) : m;  // sometimes a multiple of T
  }
  const int64_t hi = bounds_of(size).max_tokens;
  return rng.chance(20) ? hi : rng.range(1, hi);
}

// One count in [0, M], biased toward the edges of the contract.
int64_t pick_tokens(Rng& rng, int64_t M, int tp) {
  switch (rng.below(8)) {
    case 0: return 0;
    case 1: return std::min<int64_t>(1, M);
    case 2: return M;
    case 3: {  // heavy SP padding near capacity: n close to M with n mod T != 0
      int64_t n = M - static_cast<int64_t>(rng.below(static_cast<uint64_t>(tp)));
      if (tp > 1 && n % tp == 0 && n > 0) --n;
      return std::max<int64_t>(0, n);
    }
    case 4: return std::min<int64_t>(M, tp + rng.range(-1, 1));
    default: return rng.range(0, M);
  }
}

void pick_tokens_across(Rng& rng, Case& c) {
  const int D = c.topology.dp;
  const int64_t M = c.max_num_tokens;
  c.tokens.assign(static_cast<size_t>(D), 0);
  switch (rng.below(10)) {
    case 0: {  // one rank holds every token
      c.tokens[rng.below(static_cast<uint64_t>(D))] = rng.chance(50) ? M : rng.range(1, M);
      return;
    }
    case 1: return;  // every rank idle
    case 2: {        // all ranks equal (no padding needed, branches 2 and 4 may coincide)
      std::fill(c.tokens.begin(), c.tokens.end(), pick_tokens(rng, M, c.topology.tp));
      return;
    }
    default:
      for (int64_t& n : c.tokens) n = pick_tokens(rng, M, c.topology.tp);
  }
}

void pick_padding(Rng& rng, Case& c) {
  switch (rng.below(10)) {
    case 0: case 1: case 2: case 3: c.padding = {PaddingMode::none, {}}; return;
    case 4: case 5: case 6: c.padding = {PaddingMode::dp_max, {}}; return;
    default: break;
  }
  c.padding.mode = PaddingMode::cudagraph;
  if (rng.chance(50)) {
    c.padding.cudagraph_sizes = vllm_default_cudagraph_sizes();
    return;
  }
  // A custom list: a few increasing sizes, sometimes with buckets above M (a configured list; a
// vLLM profile then clamps it to M as vLLM does).
  const int64_t M = c.max_num_tokens;
  const int64_t top = rng.chance(40) ? M + rng.range(1, std::max<int64_t>(2, M / 2)) : M;
  const int count = static_cast<int>(rng.range(1, 6));
  std::vector<int64_t> sizes;
  for (int i = 0; i < count; ++i) sizes.push_back(rng.range(1, top));
  if (rng.chance(50)) sizes.push_back(top);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  c.padding.cudagraph_sizes = std::move(sizes);
}

// Under a vLLM profile every rank must vote for micro-batching (reference/profile.hpp): each
// rank's last micro-batch gets at least one real token, the busiest rank's count unchanged.
void make_every_rank_vote_yes(Case& c) {
  const int64_t most = *std::max_element(c.tokens.begin(), c.tokens.end());
  if (most == 0) return;  // fit_to_profile gives the step a token, then drops micro-batching
  const int64_t least = (most / c.microbatches) * (c.microbatches - 1) + 1;
  for (int64_t& n : c.tokens) n = std::max(n, least);
}

// Where the profile's engine can micro-batch at all (vLLM: DP with EP, modular kernel paths).
bool may_microbatch(const Case& c, Profile profile) {
  if (c.topology.dp < 2 || c.padding.mode != PaddingMode::dp_max) return false;
  return profile == Profile::any || (c.topology.ep && (c.path == Path::local || c.path == Path::sp_shard));
}

void pick_calls(Rng& rng, Case& c, const Bounds& b, Profile profile) {
  if (may_microbatch(c, profile) && rng.chance(30)) {
    c.microbatches = static_cast<int>(rng.range(2, 4));
    if (profile != Profile::any) make_every_rank_vote_yes(c);
    return;
  }
  if (profile == Profile::vllm) return;  // no DP chunking in vLLM main
  if ((c.path != Path::local && c.path != Path::sp_shard) || !rng.chance(25)) return;
  const int64_t most = most_rows_to_chunk(c);
  // C from 1 to beyond the largest rank, with at most b.max_chunks chunks.
  const int64_t least = std::max<int64_t>(1, ceil_div(most, b.max_chunks));
  c.dp_chunk = rng.range(least, std::max(least, most + 2));
}

int64_t pick_experts(Rng& rng, int top_k, bool wide) {
  if (wide && rng.chance(25)) return rng.range(32769, int64_t{1} << 20);
  switch (rng.below(5)) {
    case 0: return top_k;
    case 1: return std::max<int64_t>(top_k, 8);
    case 2: return 256;
    case 3: return limits::kMaxExpertsInInt16;
    default: return rng.range(top_k, limits::kMaxExpertsInInt16);
  }
}

// corner case 8 (docs/layout-contract.md section 8): metadata that disagrees with the tensor (or, sometimes, agrees).
void pick_metadata(Rng& rng, Case& c) {
  const std::vector<int64_t> n = derive_num_tokens_across_dp(c);
  std::vector<int64_t> sizes = derive_local_sizes(n, c.topology.tp, c.topology.sp);
  MetadataOverride o;
  switch (rng.below(5)) {
    case 0: {  // num_tokens_across_dp of the wrong length
      std::vector<int64_t> wrong = n;
      if (rng.chance(50) || wrong.size() == 1) wrong.push_back(rng.range(0, c.max_num_tokens));
      else wrong.pop_back();
      o.num_tokens_across_dp = wrong;
      break;
    }
    case 1: o.local_sizes_given = true; break;  // local_sizes unset
    case 2: {  // len(local_sizes) not a multiple of D (or not the layout's length)
      sizes.push_back(rng.range(1, 4));
      o.local_sizes_given = true;
      o.local_sizes = sizes;
      break;
    }
    case 3: {  // one entry off by one
      const size_t i = rng.below(sizes.size());
      sizes[i] = sizes[i] == 0 ? 1 : sizes[i] + (rng.chance(50) ? 1 : -1);
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

}  // namespace

std::string_view to_string(SizeClass size) {
  switch (size) {
    case SizeClass::tiny: return "tiny";
    case SizeClass::small: return "small";
    case SizeClass::production: return "production";
  }
  return "?";
}

Result<SizeClass> parse_size_class(std::string_view text) {
  for (SizeClass s : {SizeClass::tiny, SizeClass::small, SizeClass::production})
    if (text == to_string(s)) return s;
  return Error{"size: \"" + std::string(text) + "\" is not one of tiny, small, production"};
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

GeneratedCase generate_case(uint64_t seed, uint64_t index, const GeneratorOptions& options) {
  R3_CHECK(!options.sizes.empty(), "the generator needs at least one size class");
  uint64_t mix = seed ^ (index * 0xD1B54A32D192ED03ull);
  Rng rng(splitmix64(mix));
  GeneratedCase out;
  out.size = options.sizes[rng.below(options.sizes.size())];
  const Bounds b = bounds_of(out.size);
  Case& c = out.c;

  Topology& t = c.topology;
  t.tp = rng.pick({1, 2, 3, 4, 6, 8});
  if (out.size == SizeClass::tiny) t.tp = std::min(t.tp, 4);
  const int dp_cap = std::max(1, std::min(b.max_dp, b.max_ranks / t.tp));
  t.dp = rng.chance(15) ? 1 : static_cast<int>(out.size == SizeClass::production ? rng.log_range(dp_cap)
                                                                                  : rng.range(1, dp_cap));
  t.ep = rng.chance(60);
  t.sp = t.ep && t.tp > 1 && t.dp > 1 && rng.chance(60);

  c.model.layers = static_cast<int>(rng.chance(40) ? rng.range(1, 2) : rng.range(1, b.max_layers));
  c.model.top_k = static_cast<int>(rng.range(1, b.max_top_k));
  c.model.experts = static_cast<int>(pick_experts(rng, c.model.top_k, options.wide_experts));
  c.layer = rng.chance(30) ? c.model.layers - 1 : static_cast<int>(rng.range(0, c.model.layers - 1));

  c.max_num_tokens = pick_max_tokens(rng, out.size, t.tp);
  pick_tokens_across(rng, c);
  pick_padding(rng, c);

  if (t.dp == 1) {
    c.path = Path::single;
  } else if (rng.chance(50)) {
    c.path = Path::gathered;
  } else {
    c.path = t.sp ? Path::sp_shard : Path::local;
  }
  c.monolithic = (c.path == Path::single || c.path == Path::gathered) && rng.chance(50);
  pick_calls(rng, c, b, options.profile);
  if (options.profile == Profile::any) {
    if (options.metadata_overrides && c.microbatches == 1 && !c.dp_chunk && rng.chance(15)) pick_metadata(rng, c);
    if (!c.metadata && t.dp > 1 && rng.chance(25)) c.idle_dummy = true;
    return out;
  }
  // CUDA-graph sizes above M clamped as vLLM clamps a configured list, idle ranks given their
  // dummy token, a step with no token at all given one.
  c = fit_to_profile(std::move(c), options.profile);
  return out;
}

}  // namespace r3
