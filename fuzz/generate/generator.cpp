#include "fuzz/generate/generator.hpp"

#include "fuzz/generate/seeded_source.hpp"

namespace r3 {

GeneratedCase generate_case(uint64_t seed, uint64_t index, const GeneratorOptions& options) {
  R3_CHECK(!options.sizes.empty(), "the generator needs at least one size class");
  uint64_t mix = seed ^ (index * 0xD1B54A32D192ED03ull);
  Rng rng(splitmix64(mix));
  // Built once: copying a finished table costs a campaign less than building bounds per case.
  static constexpr DomainBounds kBounds[] = {bounds_of(SizeClass::tiny), bounds_of(SizeClass::small),
                                             bounds_of(SizeClass::production)};
  const SizeClass size = options.sizes[rng.below(options.sizes.size())];
  CaseDomain domain{options.profile, kBounds[static_cast<size_t>(size)], std::nullopt};
  domain.bounds.metadata_overrides = options.metadata_overrides;
  if (options.wide_experts) domain.bounds.max_experts = limits::kMaxExperts;
  domain.engine = options.engine;
  SeededSource source(rng);
  return {draw(source, domain), size};
}

}  // namespace r3
