#include "fuzz/generate/replay_source.hpp"

#include <algorithm>

namespace r3 {

ReplaySource::ReplaySource(const Case& from, Rng& rng) : drawing_(from.engine), rng_(rng) { parents_.fill(&from); }

void ReplaySource::take(Field field, const Case& parent) { parents_[static_cast<size_t>(field)] = &parent; }

void ReplaySource::redraw(Field field, size_t index) {
  fresh_.set(static_cast<size_t>(field));
  const FieldInfo* f = info(field);
  if (f && f->per_rank) fresh_index_ = index;
}

void ReplaySource::take_own(CasePart part, const Case& parent) { own_parents_[static_cast<size_t>(part)] = &parent; }

void ReplaySource::redraw_own(CasePart part, size_t index) {
  own_fresh_.set(static_cast<size_t>(part));
  fresh_index_ = index;  // for the part's per-rank fields, whichever the drawn engine's are
}

bool ReplaySource::fresh(const Choice& c) const {
  const FieldInfo* f = info(c.field);
  const bool own_fresh = is_own(c.field) && f && own_fresh_.test(static_cast<size_t>(f->part));
  if (!fresh_.test(static_cast<size_t>(c.field)) && !own_fresh) return false;
  const bool per_rank = f && f->per_rank;
  return !per_rank || fresh_index_ == kEveryEntry || fresh_index_ == c.index;
}

const Case& ReplaySource::parent(Field field) const {
  const FieldInfo* f = is_own(field) ? info(field) : nullptr;
  if (f && own_parents_[static_cast<size_t>(f->part)]) return *own_parents_[static_cast<size_t>(f->part)];
  return *parents_[static_cast<size_t>(field)];
}

// A case of another engine than the drawn one records other fields in the own slots: none of
// the drawn engine's.
std::optional<int64_t> ReplaySource::recorded(const Choice& c) const {
  const Case& from = parent(c.field);
  if (is_own(c.field) && from.engine != drawing_) return std::nullopt;
  return recorded_choice(from, c.field, c.index);
}

std::vector<int64_t> ReplaySource::recorded_entries(Field field) const {
  const Case& from = parent(field);
  if (is_own(field) && from.engine != drawing_) return {};
  return recorded_list(from, field);
}

int64_t ReplaySource::choose(const Choice& c, SeededDraw seeded) {
  if (fresh(c)) return seeded ? std::clamp(seeded(rng_), c.lo, c.hi) : rng_.range(c.lo, c.hi);
  const std::optional<int64_t> recorded_value = recorded(c);
  return recorded_value ? std::clamp(*recorded_value, c.lo, c.hi) : c.lo;
}

void ReplaySource::increasing_list(const Choice& entries, int fresh_count, int max_count, SeededList seeded,
                                   std::vector<int64_t>& out) {
  out.clear();
  if (!fresh(entries)) {
    // The parent's entries that still fit, in order (they are strictly increasing already).
    for (int64_t size : recorded_entries(entries.field)) {
      if (size >= entries.lo && size <= entries.hi && static_cast<int>(out.size()) < max_count) out.push_back(size);
    }
    if (!out.empty()) return;
  }
  // Fresh, or nothing of the parent's fits: the seeded list, within the bounds.
  seeded(rng_, out);
  std::erase_if(out, [&](int64_t size) { return size < entries.lo || size > entries.hi; });
  if (static_cast<int>(out.size()) > fresh_count) out.resize(static_cast<size_t>(fresh_count));
  if (out.empty()) out.push_back(entries.lo);
}

}  // namespace r3
