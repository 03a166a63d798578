// The pieces of the binary case format (case_binary.hpp) that every engine's encoding shares:
// LEB128 varints written relative to a lower bound and read folded into a range, length-prefixed
// UTF-8 texts, and the trailer every case ends with (note, expect, profile). The base case
// (base_codec.hpp) and each engine's codec (fuzz/engines/NAME/) are written with them, so every
// engine's errors name the byte offset alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/codec/case_binary.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

class BinaryWriter {
 public:
  void byte(uint8_t b) { out_.push_back(b); }
  // Writes value - lo (the decoder adds lo back).
  void varint(int64_t value, int64_t lo = 0);
  // The length, then the bytes.
  void text(const std::string& s);
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

// Every error names the byte offset ("binary case, byte 12: topology.dp: ...") and `what` was read.
class BinaryReader {
 public:
  explicit BinaryReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  Result<uint8_t> byte(std::string_view what);
  // A varint of at most 64 bits, as written.
  Result<uint64_t> raw(std::string_view what);
  // A value folded into [lo, hi]: lo + raw mod (hi - lo + 1).
  Result<int64_t> folded(std::string_view what, int64_t lo, int64_t hi);
  // A text of at most `max_bytes` (the length folds), well-formed UTF-8 (JSON must hold it).
  Result<std::string> text(std::string_view what, size_t max_bytes);
  // An error unless every byte was read.
  Status finish() const;

 private:
  static std::string at(size_t offset);
  Error truncated(std::string_view what) const;

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

// The note, "expect" and profile, the last fields of every engine's case: the flags saying which
// are present are the engine's, the bytes are the same for every engine.
Status decode_trailer(BinaryReader& r, const BinaryLimits& lim, bool note, bool expect, bool profile, Case& c);
void encode_trailer(BinaryWriter& w, const Case& c);

}  // namespace r3
