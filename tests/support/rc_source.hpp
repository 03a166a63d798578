// The case domain's rc::Gen adapter: every choice is a RapidCheck integer in its range, so
// RapidCheck records (and shrinks) the choice sequence and draw() turns it into a case. Only
// valid for use inside rc::gen::exec (or a property), like any `*gen`.
#pragma once

#include <rapidcheck.h>

#include "fuzz/generate/case_domain.hpp"

namespace r3::test {

class RcSource final : public Source {
 public:
  int64_t choose(const Choice& c, SeededDraw) override {
    if (c.lo == c.hi) return c.lo;
    return *rc::gen::inRange<int64_t>(c.lo, c.hi + 1);
  }
  using Source::choose;
};

}  // namespace r3::test
