// Choices read from raw bytes (libFuzzer's input, or any byte string): each choice takes as
// many bytes as its range needs, big-endian, folded into [lo, hi]; a choice with one value takes
// none, and once the bytes run out every choice is its lo. So every byte string is a valid case,
// and fewer or smaller bytes give a simpler case (the property Hypothesis's shrinker relies on).
#pragma once

#include <cstdint>
#include <span>

#include "fuzz/generate/source.hpp"

namespace r3 {

class ByteSource final : public Source {
 public:
  explicit ByteSource(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  int64_t choose(const Choice& choice, SeededDraw seeded) override;
  using Source::choose;
  size_t consumed() const { return next_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t next_ = 0;
};

}  // namespace r3
