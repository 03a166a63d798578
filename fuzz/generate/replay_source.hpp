// Replays cases as choices: each field's choice is the value a parent case holds (case_domain.hpp's
// recorded_choice), clamped into the range the domain allows given the fields before it; what a
// case does not record takes its plain value. Chosen fields are drawn afresh from a seeded Rng
// instead. Replaying a case of the domain with nothing redrawn gives the case back (the
// metadata override aside: its inner choices are not recorded).
//
// The libFuzzer mutator is this source: a mutation redraws one field and replays the rest, a
// crossover takes each field from one of two parents, and the domain keeps the result valid and
// inside the profile, so nothing needs repairing.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <limits>

#include "fuzz/generate/case_domain.hpp"

namespace r3 {

class ReplaySource final : public Source {
 public:
  static constexpr size_t kEveryEntry = std::numeric_limits<size_t>::max();

  // Every field from `from`; `rng` draws the fields redraw() names.
  ReplaySource(const Case& from, Rng& rng);
  // Field `field` from `parent` instead (which must outlive the source).
  void take(Field field, const Case& parent);
  // Field `field` drawn afresh: entry `index` of a list field, or every entry.
  void redraw(Field field, size_t index = kEveryEntry);

  int64_t choose(const Choice& choice, SeededDraw seeded) override;
  using Source::choose;
  void increasing_list(const Choice& entries, int fresh_count, int max_count, SeededList seeded,
                       std::vector<int64_t>& out) override;

 private:
  bool fresh(const Choice& choice) const;

  std::array<const Case*, kFieldCount> parents_;
  std::bitset<kFieldCount> fresh_;
  size_t fresh_index_ = kEveryEntry;
  Rng& rng_;
};

}  // namespace r3
