// The campaigns' source: each choice drawn from a seeded Rng through its seeded distribution
// (edge-seeking), plain choices uniformly. The same Rng state gives the same choices.
#pragma once

#include <algorithm>
#include <cassert>
#include <type_traits>

#include "fuzz/generate/source.hpp"

namespace r3 {

class SeededSource final : public Source {
 public:
  explicit SeededSource(Rng& rng) : rng_(rng) {}

  int64_t choose(const Choice& c, SeededDraw seeded) override {
    if (!seeded) return rng_.range(c.lo, c.hi);
    return std::clamp(seeded(rng_), c.lo, c.hi);
  }
  int64_t choose(const Choice& c) { return rng_.range(c.lo, c.hi); }
  // The seeded distribution called directly: draw(SeededSource&) inlines it. The domain's
  // seeded distributions stay inside [lo, hi] by construction (tests/fuzz/generate checks every
  // choice through the clamping overload above), so campaigns skip the clamp.
  template <class Draw>
    requires std::is_invocable_r_v<int64_t, Draw&, Rng&>
  int64_t choose(const Choice& c, Draw&& seeded) {
    const int64_t value = seeded(rng_);
    assert(value >= c.lo && value <= c.hi);
    (void)c;
    return value;
  }

  void increasing_list(const Choice& entries, int fresh_count, int max_count, SeededList seeded,
                       std::vector<int64_t>& out) override {
    if (!seeded) return Source::increasing_list(entries, fresh_count, max_count, seeded, out);
    out.clear();
    seeded(rng_, out);
  }

 private:
  Rng& rng_;
};

}  // namespace r3
