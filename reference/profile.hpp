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

// The Profile enum, its names and parse_profile() live in case.hpp: a case file may record one.
inline constexpr Profile kDefaultProfile = Profile::vllm;

// The engine a profile belongs to (vllm for `any`, which covers both), and whether a profile's
// producers may make cases of `engine`.
Engine engine_of(Profile profile);
bool covers(Profile profile, Engine engine);

// Why `c` is a step the engine of `profile` cannot run, naming the rule and its source; ok
// when the case lies inside the profile.
Status check_profile(const Case& c, Profile profile);
bool in_profile(const Case& c, Profile profile);

// The case an engine of `profile` would run for `c`: the smallest set of edits that brings it
// inside (CUDA-graph sizes clamped to M the way vLLM clamps them, idle ranks given their dummy
// token, micro-batching, DP chunking and metadata overrides dropped where the engine has none,
// one token for a step in which every rank is idle). A valid case stays valid; a case already
// inside is returned unchanged. Used by producers that cannot draw inside directly (the
// libFuzzer mutator, production seeds).
Case fit_to_profile(Case c, Profile profile);

// vLLM's micro-batching vote (vllm/v1/worker/ubatch_utils.py, is_last_ubatch_empty): a rank with
// `real` tokens, padded to `padded` rows and split into `ubatches`, votes no when its last
// micro-batch would hold no real token, i.e. with fewer real tokens than the first ubatches - 1
// micro-batches hold plus one.
int64_t fewest_tokens_to_vote_for_ubatches(int64_t padded, int ubatches);
bool last_ubatch_empty(int64_t padded, int64_t real, int ubatches);

// The rules a producer needs before it draws (the case domain, fuzz/generate/case_domain.hpp):
// whether the profile's engine chunks DP at all, and whether it can micro-batch a step on this
// topology and path (vLLM: only with EP, on the modular kernel's paths).
// Inline: the campaign generator asks both for every case.
inline bool chunking_allowed(Profile profile) { return profile == Profile::vllm_legacy || profile == Profile::any; }
inline bool engine_may_microbatch(const Case& c, Profile profile) {
  if (profile == Profile::any) return true;
  return c.topology.ep && (c.path == Path::local || c.path == Path::sp_shard);
}

// The profile a case file names ("profile" key); when it names none, the narrowest profile the
// case lies in (vllm, then vllm-legacy, then any), so a reachable case stays reachable.
Profile profile_of(const Case& c);

// Where a case stands: the profile it names (or its narrowest), and why it lies outside a
// named one. replay and explain judge any valid case, and say this.
struct ProfileStanding {
  Profile profile = kDefaultProfile;
  bool named = false;                  // the file's "profile" key
  std::optional<std::string> outside;  // the named profile's rule the case breaks
  std::string text() const;            // "profile vllm-legacy (named): outside: dp_chunk: ..."
};
ProfileStanding standing_of(const Case& c);

}  // namespace r3
