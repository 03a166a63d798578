// The inputs a fuzz target has already judged, by their exact bytes, and what it returned for
// each. From an empty corpus two in three of the inputs libFuzzer hands the differential target
// are byte for byte an input it ran before (a mutation that repairs back to its parent, a
// cross-over of two equal cases), and judging is a pure function of the bytes: a repeat is
// answered from here rather than decoded and judged again.
//
// Its memory is fixed when it is made: libFuzzer takes a run whose mallocs outnumber its frees
// for a possible leak and runs it again, so remembering must not allocate. When full, it forgets
// everything and starts over (a forgotten input is merely judged again).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace r3 {

class JudgedInputs {
 public:
  // Room for `max_inputs` inputs holding `max_bytes` bytes together.
  JudgedInputs(size_t max_inputs, size_t max_bytes);

  // What the target returned for `input`, when it is remembered.
  std::optional<int> find(std::span<const uint8_t> input) const;
  // Remembers `result` for `input`; one already remembered keeps its first answer, and one
  // larger than max_bytes is not kept.
  void remember(std::span<const uint8_t> input, int result);

  size_t size() const { return count_; }   // inputs remembered now
  size_t resets() const { return resets_; }  // times it was full and forgot everything

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;  // into bytes_
    uint32_t size = 0;
    int result = 0;
    bool used = false;
  };
  size_t slot_of(std::span<const uint8_t> input, uint64_t hash) const;  // its slot, or the empty one it would take
  void forget_everything();

  std::vector<Slot> slots_;     // open addressing, a power of two, at most half full
  std::vector<uint8_t> bytes_;  // the remembered inputs end to end; never grows past its size
  size_t max_inputs_ = 0;
  size_t used_bytes_ = 0;
  size_t count_ = 0;
  size_t resets_ = 0;
};

}  // namespace r3
