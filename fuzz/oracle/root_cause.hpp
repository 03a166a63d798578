// A finding's root cause, for models that know their distance to the proposed fix: the smallest
// set of the model's patches (CapturePolicy::patch_names) that makes a failing case pass. Two
// failures that the same patch repairs are one bug, whatever their verdicts and layouts (a TBO
// overwrite shows as wrong rows on one layout and as a shape error on another).
#pragma once

#include <string>

#include "reference/case.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3 {

// "tbo-offsets", "buffer-rows+window-token-bucket" (names joined by '+', in the model's order);
// empty when the policy has no patches, the case passes already, or no set of at most two
// patches repairs it. Judged symbolically.
std::string root_cause(const CapturePolicy& policy, const Case& c, const Step& step);

}  // namespace r3
