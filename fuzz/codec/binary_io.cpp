#include "fuzz/codec/binary_io.hpp"

namespace r3 {
namespace {

// Well-formed UTF-8 (no overlongs, no surrogates): JSON text must be able to hold it.
bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<uint8_t>(s[i]);
    int extra = 0;
    uint32_t cp = 0;
    if (b < 0x80) { ++i; continue; }
    if ((b & 0xE0) == 0xC0) { extra = 1; cp = b & 0x1F; }
    else if ((b & 0xF0) == 0xE0) { extra = 2; cp = b & 0x0F; }
    else if ((b & 0xF8) == 0xF0) { extra = 3; cp = b & 0x07; }
    else return false;
    if (i + static_cast<size_t>(extra) >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      const auto c = static_cast<uint8_t>(s[i + k]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    static constexpr uint32_t kMinimum[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMinimum[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += static_cast<size_t>(extra) + 1;
  }
  return true;
}

}  // namespace

// ---- writing -------------------------------------------------------------------------

void BinaryWriter::varint(int64_t value, int64_t lo) {
  uint64_t v = static_cast<uint64_t>(value - lo);
  while (v >= 0x80) {
    out_.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<uint8_t>(v));
}

void BinaryWriter::text(const std::string& s) {
  varint(static_cast<int64_t>(s.size()));
  out_.insert(out_.end(), s.begin(), s.end());
}

// ---- reading -------------------------------------------------------------------------

Result<uint8_t> BinaryReader::byte(std::string_view what) {
  if (pos_ >= bytes_.size()) return truncated(what);
  return bytes_[pos_++];
}

Result<uint64_t> BinaryReader::raw(std::string_view what) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= bytes_.size()) return truncated(what);
    const uint8_t b = bytes_[pos_++];
    const uint64_t bits = b & 0x7Fu;
    if (shift == 63 && bits > 1) return Error{at(pos_ - 1) + std::string(what) + ": varint exceeds 64 bits"};
    value |= bits << shift;
    if ((b & 0x80) == 0) return value;
  }
  return Error{at(pos_ - 1) + std::string(what) + ": varint longer than 10 bytes"};
}

Result<int64_t> BinaryReader::folded(std::string_view what, int64_t lo, int64_t hi) {
  R3_TRY(uint64_t v, raw(what));
  const auto span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(v % span);
}

Result<std::string> BinaryReader::text(std::string_view what, size_t max_bytes) {
  R3_TRY(int64_t length, folded(what, 0, static_cast<int64_t>(max_bytes)));
  if (bytes_.size() - pos_ < static_cast<size_t>(length)) return truncated(what);
  std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<size_t>(length));
  if (!valid_utf8(s)) return Error{at(pos_) + std::string(what) + ": not valid UTF-8"};
  pos_ += static_cast<size_t>(length);
  return s;
}

Status BinaryReader::finish() const {
  if (pos_ == bytes_.size()) return ok_status();
  return Error{at(pos_) + std::to_string(bytes_.size() - pos_) + " trailing byte(s) after the case"};
}

std::string BinaryReader::at(size_t offset) { return "binary case, byte " + std::to_string(offset) + ": "; }

Error BinaryReader::truncated(std::string_view what) const {
  return Error{at(pos_) + "truncated: the input ends before " + std::string(what)};
}

// ---- the trailer ---------------------------------------------------------------------

Status decode_trailer(BinaryReader& r, const BinaryLimits& lim, bool note, bool expect, bool profile, Case& c) {
  if (note) {
    R3_TRY(c.note, r.text("note", lim.max_text));
  }
  if (expect) {
    Expectation e;
    R3_TRY(e.impl, r.text("expect.impl", lim.max_text));
    R3_TRY(const std::string verdict, r.text("expect.verdict", lim.max_text));
    R3_TRY(const std::string severity, r.text("expect.severity", lim.max_text));
    if (e.impl.empty()) return Error{"expect.impl: must name an implementation, got an empty string"};
    auto v = parse_verdict(verdict);
    if (!v) return Error{"expect." + v.error().message};
    auto s = parse_severity(severity);
    if (!s) return Error{"expect." + s.error().message};
    e.verdict = *v;
    e.severity = *s;
    c.expect = std::move(e);
  }
  if (profile) {
    // Profile::code(), folded into the registered profiles.
    R3_TRY(int64_t value, r.folded("profile", 0, static_cast<int64_t>(profile_count()) - 1));
    c.profile = Profile::at(static_cast<size_t>(value));
  }
  return ok_status();
}

void encode_trailer(BinaryWriter& w, const Case& c) {
  if (!c.note.empty()) w.text(c.note);
  if (c.expect) {
    w.text(c.expect->impl);
    w.text(std::string(to_string(c.expect->verdict)));
    w.text(std::string(to_string(c.expect->severity)));
  }
  if (c.profile) w.varint(static_cast<int64_t>(c.profile->code()));
}

}  // namespace r3
