// RapidCheck's Arbitrary<r3::Case>: valid cases (tests/support/case_gen.hpp) that shrink the
// way r3fuzz shrink does, through the shrinker's own passes (fuzz/shrink/passes.hpp, path
// changes allowed), so a failing property reports "dp 2 tp 2, tokens [1, 0]" rather than
// whatever RapidCheck's generic shrinking of the generator's choices reaches. Every shrink
// is valid: candidates validate() refuses are dropped. Header-only and test-side, so fuzz/
// never depends on RapidCheck.
#pragma once

#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "fuzz/shrink/passes.hpp"
#include "reference/validate.hpp"
#include "tests/support/case_gen.hpp"

namespace r3::test {

// The valid candidates of every shrink pass, most-reducing first within each pass.
inline rc::Seq<Case> domain_shrinks(const Case& c) {
  std::vector<Case> proposed;
  for (const ShrinkPass& pass : shrink_passes(c.engine, /*allow_path_change=*/true)) pass.propose(c, proposed);
  std::vector<Case> valid;
  for (Case& candidate : proposed) {
    if (candidate != c && validate(candidate).ok()) valid.push_back(std::move(candidate));
  }
  return rc::seq::fromContainer(std::move(valid));
}

// gen_valid_case's first value, with domain shrinks instead of the generic ones.
inline rc::Gen<Case> gen_shrinking_case(CaseGenOptions options = {}) {
  rc::Gen<Case> base = gen_valid_case(options);
  return rc::Gen<Case>([base](const rc::Random& random, int size) {
    return rc::shrinkable::shrinkRecur(base(random, size).value(), &domain_shrinks);
  });
}

}  // namespace r3::test

namespace rc {

template <>
struct Arbitrary<r3::Case> {
  static Gen<r3::Case> arbitrary() {
    r3::test::CaseGenOptions options;
    options.microbatches = true;
    options.dp_chunk = true;
    return r3::test::gen_shrinking_case(options);
  }
};

}  // namespace rc
