// The generic half of profiles: which engine a profile is, and the dispatch to that engine's
// rules (EngineModel::check_profile, reference/engines/NAME/).
#include "reference/profile.hpp"

#include "reference/engine_model.hpp"

namespace r3 {

bool chunking_allowed(Profile profile) { return profile.is_any() || profile.engine().model().chunks_dp(profile); }

bool engine_may_microbatch(const Case& c, Profile profile) {
  return profile.is_any() || profile.engine().model().may_microbatch(c, profile);
}

Status check_profile(const Case& c, Profile profile) {
  if (profile.is_any()) return ok_status();
  if (!covers(profile, c.engine)) {
    return Error{"engine: a " + std::string(to_string(c.engine)) + " case lies outside profile " +
                 std::string(to_string(profile)) + ", which is " + std::string(to_string(engine_of(profile))) + "'s"};
  }
  return c.engine.model().check_profile(c, profile);
}

bool in_profile(const Case& c, Profile profile) { return check_profile(c, profile).ok(); }

Case fit_to_profile(Case c, Profile profile) {
  if (profile.is_any() || !covers(profile, c.engine)) return c;
  const EngineModel& model = c.engine.model();
  return model.fit_to_profile(std::move(c), profile);
}

ProfileStanding standing_of(const Case& c) {
  ProfileStanding s;
  s.profile = profile_of(c);
  s.named = c.profile.has_value();
  if (Status inside = check_profile(c, s.profile); !inside.ok()) s.outside = inside.error().message;
  return s;
}

std::string ProfileStanding::text() const {
  std::string t = "profile " + std::string(to_string(profile)) + (named ? " (named in the case)" : " (the narrowest it lies in)");
  return outside ? t + ": OUTSIDE it: " + *outside : t;
}

Profile profile_of(const Case& c) {
  if (c.profile) return *c.profile;
  for (size_t variant = 0; variant < c.engine.model().profiles().size(); ++variant) {
    const Profile p = Profile::of(c.engine, variant);
    if (in_profile(c, p)) return p;
  }
  return Profile::any();
}

}  // namespace r3
