// Engine profiles (docs/layout-contract.md section 10): the part of the case space an engine can
// actually run. A profile never changes what a case means; it only decides which cases the
// producers (generator, mutator, enumerator, shrinker, seeder, test generators) may produce, so
// that every failure r3fuzz reports by default is one the engine under test can reach.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

// Profile, its names, parse_profile() and kDefaultProfile live in reference/engine.hpp: each
// engine registers its own profiles.

// The engine a profile belongs to (the default engine for `any`, which covers every engine),
// and whether a profile's producers may make cases of `engine`.
inline Engine engine_of(Profile profile) { return profile.engine(); }
inline bool covers(Profile profile, Engine engine) { return profile.is_any() || profile.engine() == engine; }

// Why `c` is a step the engine of `profile` cannot run, naming the rule and its source; ok
// when the case lies inside the profile.
Status check_profile(const Case& c, Profile profile);
bool in_profile(const Case& c, Profile profile);

// The case an engine of `profile` would run for `c`: the smallest set of edits that brings it
// inside (EngineModel::fit_to_profile; for vLLM: CUDA-graph sizes clamped to M the way vLLM
// clamps them, idle ranks given their dummy token, micro-batching, DP chunking and metadata
// overrides dropped where the engine has none). A valid case stays valid; a case already
// inside, or of another engine than the profile's, is returned unchanged. Used by producers
// that cannot draw inside directly (the libFuzzer mutator, production seeds).
Case fit_to_profile(Case c, Profile profile);

// The rules a producer needs before it draws (the case domain, fuzz/generate/case_domain.hpp):
// whether the profile's engine chunks DP at all, and whether it can micro-batch this step
// (EngineModel::chunks_dp, may_microbatch; `any` allows both).
bool chunking_allowed(Profile profile);
bool engine_may_microbatch(const Case& c, Profile profile);

// The profile a case file names ("profile" key); when it names none, the narrowest profile the
// case lies in (its engine's, in their order, then any), so a reachable case stays reachable.
Profile profile_of(const Case& c);

// Where a case stands: the profile it names (or its narrowest), and why it lies outside a
// named one. replay and explain judge any valid case, and say this.
struct ProfileStanding {
  Profile profile = kDefaultProfile;
  bool named = false;                  // the file's "profile" key
  std::optional<std::string> outside;  // the named profile's rule the case breaks
  std::string text() const;            // "profile NAME (named in the case): OUTSIDE it: ..."
};
ProfileStanding standing_of(const Case& c);

}  // namespace r3
