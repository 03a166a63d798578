#include "fuzz/generate/byte_source.hpp"

namespace r3 {

int64_t ByteSource::choose(const Choice& c, SeededDraw) {
  const uint64_t span = static_cast<uint64_t>(c.hi - c.lo);  // values - 1
  if (span == 0) return c.lo;
  uint64_t raw = 0;
  for (uint64_t covered = span; covered != 0 && next_ < bytes_.size(); covered >>= 8) raw = (raw << 8) | bytes_[next_++];
  return c.lo + static_cast<int64_t>(span == UINT64_MAX ? raw : raw % (span + 1));
}

}  // namespace r3
