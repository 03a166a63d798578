#include "fuzz/generate/enumerating_source.hpp"

namespace r3 {

int64_t EnumeratingSource::choose(const Choice& c, SeededDraw) {
  if (is_hint(c.field)) return c.lo;
  if (position_ < taken_.size()) {
    // The replayed prefix: the choices before this one are the same, so is its range.
    return taken_[position_++].value;
  }
  taken_.push_back({c.lo, c.hi});
  ++position_;
  return c.lo;
}

bool EnumeratingSource::advance() {
  taken_.resize(position_);  // a draw may stop short of the last one's length
  while (!taken_.empty() && taken_.back().value == taken_.back().hi) taken_.pop_back();
  position_ = 0;
  if (taken_.empty()) return false;
  ++taken_.back().value;
  return true;
}

}  // namespace r3
