#include "fuzz/libfuzzer/mutator.hpp"

#include <array>
#include <cstring>
#include <utility>
#include <vector>

namespace r3 {
namespace {

// Marks every field of `part` fresh (the tokens of one rank only, when `rank` is given). The
// engine's own fields of the part are the drawn case's engine's (ReplaySource::redraw_own):
// that of the parent unless the mutation redraws the engine.
void redraw_part(ReplaySource& source, CasePart part, size_t rank) {
  for (const FieldInfo& f : case_fields()) {
    // One rank's count changes alone: the token shape stays "each rank on its own".
    if (f.part == part && (rank == ReplaySource::kEveryEntry || !is_hint(f.field))) source.redraw(f.field, rank);
  }
  source.redraw_own(part, rank);
}

// The metadata's inner choices are not recorded in a case, so a replayed override comes back
// as it was, wherever the domain kept one.
Case with_replayed_metadata(Case drawn, const Case& parent) {
  if (drawn.metadata && parent.metadata) drawn.metadata = parent.metadata;
  return drawn;
}

// Each part from a or b at random; the child is drawn from the domain. The engine's own fields
// of a part taken from b are those the child's engine places in it (ReplaySource::take_own),
// whichever parent the engine comes from.
Case cross_over_once(const Case& a, const Case& b, Rng& rng, const CaseDomain& domain) {
  ReplaySource source(a, rng);
  bool metadata_from_b = false;
  for (int p = 0; p < kCasePartCount; ++p) {
    if (!rng.chance(50)) continue;
    for (const FieldInfo& f : case_fields()) {
      if (f.part == static_cast<CasePart>(p)) source.take(f.field, b);
    }
    source.take_own(static_cast<CasePart>(p), b);
    metadata_from_b |= static_cast<CasePart>(p) == CasePart::metadata;
  }
  return with_replayed_metadata(draw(source, domain), metadata_from_b ? b : a);
}

// Choices of parts a crossover tries before it mutates instead (and mutations it tries).
constexpr int kCrossOverAttempts = 4;

size_t write_if_fits(const Case& c, uint8_t* out, size_t max_size, size_t fallback) {
  const std::vector<uint8_t> bytes = case_to_binary(c);
  if (bytes.size() > max_size) return fallback;
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

}  // namespace

CaseDomain fuzz_domain(const BinaryLimits& l, Profile profile) {
  return {profile, {.max_dp = l.max_dp, .max_ranks = l.max_dp * l.max_tp, .max_tp = l.max_tp, .max_tokens = l.max_rows,
                    .max_layers = l.max_layers, .max_top_k = l.max_top_k, .max_experts = l.max_experts,
                    .max_microbatches = l.max_microbatches, .max_capture_sizes = l.max_cudagraph_sizes,
                    .max_capture_size = l.max_cudagraph_size, .max_dp_chunk = l.max_dp_chunk,
                    .metadata_overrides = l.max_metadata_entries > 0},
          std::nullopt};
}

Case mutate(const Case& c, CasePart part, Rng& rng, const CaseDomain& domain, size_t rank) {
  ReplaySource source(c, rng);
  redraw_part(source, part, rank);
  Case drawn = draw(source, domain);
  return part == CasePart::metadata ? drawn : with_replayed_metadata(std::move(drawn), c);
}

Case mutate(const Case& c, Rng& rng, const CaseDomain& domain) {
  // Parts in a random order until one changes the case (in a vLLM profile, say, the metadata
  // part never does). Not the next part along: rolling on from parts that cannot change handed
  // their share to the part after them (topology took 4 mutations in 9 after the metadata and
  // idle-dummy parts), and the more often one part is redrawn the more its redraws repeat.
  std::array<CasePart, kCasePartCount> order;
  for (int p = 0; p < kCasePartCount; ++p) order[static_cast<size_t>(p)] = static_cast<CasePart>(p);
  Case out;
  for (size_t k = 0; k < order.size(); ++k) {
    std::swap(order[k], order[k + rng.below(order.size() - k)]);
    const CasePart part = order[k];
    // One DP rank's count (tokens, or an SGLang decode's requests: one entry per DP rank either way).
    const size_t rank =
        part == CasePart::tokens ? rng.below(static_cast<uint64_t>(c.topology.dp)) : ReplaySource::kEveryEntry;
    out = mutate(c, part, rng, domain, rank);
    if (out != c) break;
  }
  return out;
}

Case cross_over(const Case& a, const Case& b, Rng& rng, const CaseDomain& domain) {
  // A child equal to a parent is an input libFuzzer has run already (the corpus holds both
  // parents): a case crossed with itself, parts taken from b that a holds alike, a choice of b's
  // the domain clamps back to a's. Half of all crossovers came out so. Another choice of parts
  // then, and when none differs from both parents (a and b differ in one part, say), a mutation.
  if (a != b) {
    for (int attempt = 0; attempt < kCrossOverAttempts; ++attempt) {
      Case child = cross_over_once(a, b, rng, domain);
      if (child != a && child != b) return child;
    }
  }
  // A mutation of a can land on b when they differ in one small part.
  Case child = mutate(a, rng, domain);
  for (int attempt = 0; child == b && attempt < kCrossOverAttempts; ++attempt) child = mutate(a, rng, domain);
  return child;
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
  Rng rng(seed);
  auto decoded = case_from_binary(std::span<const uint8_t>(data, size), limits);
  const Case from = decoded ? *decoded : starting_case();
  return write_if_fits(mutate(from, rng, fuzz_domain(limits, profile)), data, max_size, size);
}

size_t cross_over_bytes(std::span<const uint8_t> a, std::span<const uint8_t> b, uint8_t* out, size_t max_size,
                        unsigned int seed, const BinaryLimits& limits, Profile profile) {
  Rng rng(seed);
  auto ca = case_from_binary(a, limits);
  auto cb = case_from_binary(b, limits);
  const Case first = ca ? *ca : starting_case();
  const Case second = cb ? *cb : starting_case();
  return write_if_fits(cross_over(first, second, rng, fuzz_domain(limits, profile)), out, max_size, 0);
}

}  // namespace r3
