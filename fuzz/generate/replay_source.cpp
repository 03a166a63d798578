#include "fuzz/generate/replay_source.hpp"

#include <algorithm>

namespace r3 {

ReplaySource::ReplaySource(const Case& from, Rng& rng) : rng_(rng) { parents_.fill(&from); }

void ReplaySource::take(Field field, const Case& parent) { parents_[static_cast<size_t>(field)] = &parent; }

void ReplaySource::redraw(Field field, size_t index) {
  fresh_.set(static_cast<size_t>(field));
  if (field == Field::tokens || field == Field::requests) fresh_index_ = index;
}

bool ReplaySource::fresh(const Choice& c) const {
  if (!fresh_.test(static_cast<size_t>(c.field))) return false;
  const bool per_rank = c.field == Field::tokens || c.field == Field::requests;
  return !per_rank || fresh_index_ == kEveryEntry || fresh_index_ == c.index;
}

int64_t ReplaySource::choose(const Choice& c, SeededDraw seeded) {
  if (fresh(c)) return seeded ? std::clamp(seeded(rng_), c.lo, c.hi) : rng_.range(c.lo, c.hi);
  const std::optional<int64_t> recorded = recorded_choice(*parents_[static_cast<size_t>(c.field)], c.field, c.index);
  return recorded ? std::clamp(*recorded, c.lo, c.hi) : c.lo;
}

void ReplaySource::increasing_list(const Choice& entries, int fresh_count, int max_count, SeededList seeded,
                                   std::vector<int64_t>& out) {
  out.clear();
  if (!fresh(entries)) {
    // The parent's entries that still fit, in order (they are strictly increasing already).
    for (int64_t size : recorded_list(*parents_[static_cast<size_t>(entries.field)], entries.field)) {
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
