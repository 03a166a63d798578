// Replays cases as choices: each field's choice is the value a parent case holds (case_domain.hpp's
// recorded_choice), clamped into the range the domain allows given the fields before it; what a
// case does not record takes its plain value. Chosen fields are drawn afresh from a seeded Rng
// instead. Replaying a case of the domain with nothing redrawn gives the case back (the
// metadata override aside: its inner choices are not recorded).
//
// An engine's own fields are slots that mean what the drawn engine says (source.hpp): a parent of
// another engine records none of them, so there they take their plain value.
//
// The libFuzzer mutator is this source: a mutation redraws one field and replays the rest, a
// crossover takes each field from one of two parents, and the domain keeps the result valid and
// inside the profile, so nothing needs repairing.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <limits>
#include <optional>

#include "fuzz/generate/case_domain.hpp"

namespace r3 {

class ReplaySource final : public Source {
 public:
  static constexpr size_t kEveryEntry = std::numeric_limits<size_t>::max();

  // Every field from `from`; `rng` draws the fields redraw() names.
  ReplaySource(const Case& from, Rng& rng);
  // Field `field` from `parent` instead (which must outlive the source).
  void take(Field field, const Case& parent);
  // Field `field` drawn afresh: entry `index` of a per-rank field, or every entry.
  void redraw(Field field, size_t index = kEveryEntry);
  // The own fields (source.hpp) of `part` from `parent`, or drawn afresh (entry `index` of a
  // per-rank one): which own fields those are is the drawn engine's to say (drawing()), so they
  // are resolved when the draw asks for them. A mutation that redraws the engine thus takes the
  // new engine's fields of the part, not the parent's.
  void take_own(CasePart part, const Case& parent);
  void redraw_own(CasePart part, size_t index = kEveryEntry);

  void drawing(Engine engine) override { drawing_ = engine; }

  int64_t choose(const Choice& choice, SeededDraw seeded) override;
  using Source::choose;
  void increasing_list(const Choice& entries, int fresh_count, int max_count, SeededList seeded,
                       std::vector<int64_t>& out) override;

 private:
  // What the field is in a case of the drawn engine; null for an own slot it does not use.
  const FieldInfo* info(Field field) const { return field_info(field, drawing_); }
  bool fresh(const Choice& choice) const;
  const Case& parent(Field field) const;
  std::optional<int64_t> recorded(const Choice& choice) const;
  std::vector<int64_t> recorded_entries(Field field) const;

  std::array<const Case*, kFieldCount> parents_;
  std::array<const Case*, kCasePartCount> own_parents_{};  // null: the field's own parent
  std::bitset<kFieldCount> fresh_;
  std::bitset<kCasePartCount> own_fresh_;
  Engine drawing_;  // the engine of the case drawn, once draw() says; until then the first parent's
  size_t fresh_index_ = kEveryEntry;
  Rng& rng_;
};

}  // namespace r3
