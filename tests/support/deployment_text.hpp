// Deployment documents as the engines' seed tests edit them (fuzz/engines/NAME/deployment.cpp): a
// small deployment's JSON text with one key replaced or added, and what reading it gives.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/seed/seed.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3::test {

// The error reading `text` as a deployment gives, or "(no error)".
inline std::string deployment_error(const std::string& text) {
  auto d = deployment_from_json_text(text);
  return d ? "(no error)" : d.error().message;
}

// `text` with `key`'s value replaced by `value` (JSON text), or the key added at the end. The
// value replaced runs to the end of its line (a pretty-printed document, one key a line).
inline std::string with_key(std::string text, const std::string& key, const std::string& value) {
  const std::string needle = "\"" + key + "\": ";
  const size_t at = text.find(needle);
  if (at == std::string::npos) return text.replace(text.rfind('}'), 1, ", " + needle + value + "}");
  size_t end = text.find(",\n", at);
  if (end == std::string::npos) end = text.find("\n}", at);
  return text.replace(at + needle.size(), end - at - needle.size(), value);
}

// Each traffic case the deployment `text` seeds, as `describe` writes it (before `r3fuzz seed` fits
// it to the profile); every case is expected valid, and inside `profile` once fitted as the seed
// command fits it (seed_in_profile).
inline std::vector<std::string> seeded_traffic(const std::string& text, Profile profile,
                                               const std::function<std::string(const Case&)>& describe) {
  auto d = deployment_from_json_text(text);
  EXPECT_TRUE(d) << d.error().message;
  std::vector<std::string> out;
  if (!d) return out;
  const Status s = for_each_traffic_case(*d, [&](Case c) -> Status {
    EXPECT_TRUE(validate(c).ok()) << validate(c).error().message;
    const Result<Case> seeded = seed_in_profile(c, profile);
    EXPECT_TRUE(seeded.ok()) << seeded.error().message;
    if (seeded) {
      EXPECT_TRUE(in_profile(*seeded, profile)) << describe(c);
    }
    out.push_back(describe(c));
    return ok_status();
  });
  EXPECT_TRUE(s.ok()) << s.error().message;
  return out;
}

}  // namespace r3::test
