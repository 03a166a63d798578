#include "fuzz/libfuzzer/judged_inputs.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace r3 {
namespace {

// FNV-1a: inputs are tens of bytes, so a short loop beats a heavier hash.
uint64_t hash_of(std::span<const uint8_t> input) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : input) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

}  // namespace

JudgedInputs::JudgedInputs(size_t max_inputs, size_t max_bytes)
    : slots_(std::bit_ceil(std::max<size_t>(2 * max_inputs, 2))), bytes_(max_bytes), max_inputs_(max_inputs) {}

size_t JudgedInputs::slot_of(std::span<const uint8_t> input, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.used) return i;
    if (s.hash == hash && s.size == input.size() &&
        std::equal(input.begin(), input.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(s.offset)))
      return i;
  }
}

std::optional<int> JudgedInputs::find(std::span<const uint8_t> input) const {
  if (count_ == 0) return std::nullopt;
  const Slot& s = slots_[slot_of(input, hash_of(input))];
  if (!s.used) return std::nullopt;
  return s.result;
}

void JudgedInputs::remember(std::span<const uint8_t> input, int result) {
  if (input.size() > bytes_.size() || max_inputs_ == 0) return;
  if (count_ == max_inputs_ || input.size() > bytes_.size() - used_bytes_) forget_everything();
  const uint64_t hash = hash_of(input);
  Slot& s = slots_[slot_of(input, hash)];
  if (s.used) return;
  std::copy(input.begin(), input.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(used_bytes_));
  s = Slot{hash, static_cast<uint32_t>(used_bytes_), static_cast<uint32_t>(input.size()), result, true};
  used_bytes_ += input.size();
  ++count_;
}

void JudgedInputs::forget_everything() {
  std::fill(slots_.begin(), slots_.end(), Slot{});
  used_bytes_ = 0;
  count_ = 0;
  ++resets_;
}

}  // namespace r3
