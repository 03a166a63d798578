#include "fuzz/codec/case_binary.hpp"

#include <string>
#include <string_view>

#include "reference/limits.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

namespace flag {
inline constexpr uint8_t ep = 1 << 0;
inline constexpr uint8_t sp = 1 << 1;
inline constexpr uint8_t monolithic = 1 << 2;
inline constexpr uint8_t dp_chunk = 1 << 3;
inline constexpr uint8_t num_tokens_given = 1 << 4;
inline constexpr uint8_t local_sizes_given = 1 << 5;
inline constexpr uint8_t local_sizes_set = 1 << 6;
inline constexpr uint8_t metadata = 1 << 7;
}  // namespace flag

namespace kind {
inline constexpr uint8_t note = 1 << 4;
inline constexpr uint8_t expect = 1 << 5;
inline constexpr uint8_t idle_dummy = 1 << 6;
inline constexpr uint8_t profile = 1 << 7;
}  // namespace kind

constexpr Path kPaths[] = {Path::single, Path::gathered, Path::local, Path::sp_shard};
constexpr PaddingMode kPaddings[] = {PaddingMode::none, PaddingMode::dp_max, PaddingMode::cudagraph};

class Writer {
 public:
  void byte(uint8_t b) { out_.push_back(b); }
  // Writes value - lo (the decoder adds lo back).
  void varint(int64_t value, int64_t lo = 0) {
    uint64_t v = static_cast<uint64_t>(value - lo);
    while (v >= 0x80) {
      out_.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<uint8_t>(v));
  }
  void text(const std::string& s) {
    varint(static_cast<int64_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

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

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  Result<uint8_t> byte(std::string_view what) {
    if (pos_ >= bytes_.size()) return truncated(what);
    return bytes_[pos_++];
  }

  Result<uint64_t> raw(std::string_view what) {
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

  // A value folded into [lo, hi].
  Result<int64_t> folded(std::string_view what, int64_t lo, int64_t hi) {
    R3_TRY(uint64_t v, raw(what));
    const auto span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(v % span);
  }

  Result<std::string> text(std::string_view what, size_t max_bytes) {
    R3_TRY(int64_t length, folded(what, 0, static_cast<int64_t>(max_bytes)));
    if (bytes_.size() - pos_ < static_cast<size_t>(length)) return truncated(what);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<size_t>(length));
    if (!valid_utf8(s)) return Error{at(pos_) + std::string(what) + ": not valid UTF-8"};
    pos_ += static_cast<size_t>(length);
    return s;
  }

  Status finish() const {
    if (pos_ == bytes_.size()) return ok_status();
    return Error{at(pos_) + std::to_string(bytes_.size() - pos_) + " trailing byte(s) after the case"};
  }

 private:
  static std::string at(size_t offset) { return "binary case, byte " + std::to_string(offset) + ": "; }
  Error truncated(std::string_view what) const {
    return Error{at(pos_) + "truncated: the input ends before " + std::string(what)};
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

Result<std::vector<int64_t>> read_list(Reader& r, std::string_view what, int max_entries, int64_t max_value) {
  R3_TRY(int64_t count, r.folded(what, 0, max_entries));
  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    R3_TRY(int64_t v, r.folded(what, 0, max_value));
    values.push_back(v);
  }
  return values;
}

Result<std::vector<int64_t>> read_cudagraph_sizes(Reader& r, const BinaryLimits& lim) {
  R3_TRY(int64_t count, r.folded("padding.cudagraph count", 1, lim.max_cudagraph_sizes));
  std::vector<int64_t> sizes;
  R3_TRY(int64_t first, r.folded("padding.cudagraph[0]", 1, lim.max_cudagraph_size));
  sizes.push_back(first);
  for (int64_t i = 1; i < count; ++i) {
    const int64_t prev = sizes.back();
    if (prev >= lim.max_cudagraph_size) {
      return Error{"padding.cudagraph: entry " + std::to_string(i) + " would exceed the largest capture size " +
                   std::to_string(lim.max_cudagraph_size)};
    }
    R3_TRY(int64_t next, r.folded("padding.cudagraph gap", prev + 1, lim.max_cudagraph_size));
    sizes.push_back(next);
  }
  return sizes;
}

Result<Case> decode(Reader& r, const BinaryLimits& lim) {
  R3_TRY(uint8_t version, r.byte("the version byte"));
  if (version != kCaseBinaryVersion) {
    return Error{"binary case: version " + std::to_string(version) + " is not supported (expected " +
                 std::to_string(kCaseBinaryVersion) + ")"};
  }
  R3_TRY(uint8_t flags, r.byte("the flags byte"));
  R3_TRY(uint8_t kinds, r.byte("the kinds byte"));
  Case c;
  c.topology.ep = flags & flag::ep;
  c.topology.sp = flags & flag::sp;
  c.monolithic = flags & flag::monolithic;
  c.path = kPaths[kinds & 3u];
  c.padding.mode = kPaddings[((kinds >> 2) & 3u) % 3];
  c.idle_dummy = kinds & kind::idle_dummy;

  R3_TRY(int64_t dp, r.folded("topology.dp", 1, lim.max_dp));
  R3_TRY(int64_t tp, r.folded("topology.tp", 1, lim.max_tp));
  R3_TRY(int64_t layers, r.folded("model.layers", 1, lim.max_layers));
  R3_TRY(int64_t top_k, r.folded("model.top_k", 1, lim.max_top_k));
  R3_TRY(int64_t experts, r.folded("model.experts", 1, lim.max_experts));
  R3_TRY(c.max_num_tokens, r.folded("max_num_tokens", 1, lim.max_rows));
  R3_TRY(int64_t layer, r.folded("layer", 0, layers - 1));
  R3_TRY(int64_t microbatches, r.folded("microbatches", 1, lim.max_microbatches));
  c.topology.dp = static_cast<int>(dp);
  c.topology.tp = static_cast<int>(tp);
  c.model = {static_cast<int>(layers), static_cast<int>(top_k), static_cast<int>(experts)};
  c.layer = static_cast<int>(layer);
  c.microbatches = static_cast<int>(microbatches);
  if (flags & flag::dp_chunk) {
    R3_TRY(c.dp_chunk, r.folded("dp_chunk", 1, lim.max_dp_chunk));
  }
  for (int d = 0; d < c.topology.dp; ++d) {
    R3_TRY(int64_t tokens, r.folded("tokens", 0, c.max_num_tokens));
    c.tokens.push_back(tokens);
  }
  if (c.padding.mode == PaddingMode::cudagraph) {
    R3_TRY(c.padding.cudagraph_sizes, read_cudagraph_sizes(r, lim));
  }
  if (flags & flag::metadata) {
    MetadataOverride m;
    if (flags & flag::num_tokens_given) {
      R3_TRY(m.num_tokens_across_dp, read_list(r, "metadata.num_tokens_across_dp", lim.max_metadata_entries,
                                               lim.max_metadata_value));
    }
    m.local_sizes_given = flags & flag::local_sizes_given;
    if (m.local_sizes_given && (flags & flag::local_sizes_set)) {
      R3_TRY(m.local_sizes, read_list(r, "metadata.local_sizes", lim.max_metadata_entries, lim.max_metadata_value));
    }
    c.metadata = std::move(m);
  }
  if (kinds & kind::note) {
    R3_TRY(c.note, r.text("note", lim.max_text));
  }
  if (kinds & kind::expect) {
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
  if (kinds & kind::profile) {
    R3_TRY(int64_t profile, r.folded("profile", 0, 2));
    c.profile = static_cast<Profile>(profile);
  }
  R3_TRY_STATUS(r.finish());
  R3_TRY_STATUS(validate(c));
  return c;
}

}  // namespace

BinaryLimits concrete_binary_limits() {
  BinaryLimits l;
  l.max_dp = 8;
  l.max_tp = 8;
  l.max_layers = 8;
  l.max_top_k = 4;
  l.max_experts = limits::kMaxExperts;
  l.max_rows = 64;
  l.max_cudagraph_sizes = 16;
  l.max_cudagraph_size = 128;
  l.max_microbatches = 4;
  l.max_dp_chunk = 64;
  l.max_metadata_entries = 2 * 8 * 8;
  l.max_metadata_value = 256;
  l.max_text = 0;  // notes and expectations are documentation, not behaviour
  return l;
}

BinaryLimits full_binary_limits() {
  BinaryLimits l;
  l.max_dp = limits::kMaxDp;
  l.max_tp = limits::kMaxTp;
  l.max_layers = limits::kMaxLayers;
  l.max_top_k = limits::kMaxTopK;
  l.max_experts = limits::kMaxExperts;
  l.max_rows = limits::kMaxRows;
  l.max_cudagraph_sizes = limits::kMaxCudagraphSizes;
  l.max_cudagraph_size = limits::kMaxRows;
  l.max_microbatches = limits::kMaxMicrobatches;
  l.max_dp_chunk = limits::kMaxRows;
  l.max_metadata_entries = limits::kMaxMetadataEntries;
  l.max_metadata_value = limits::kMaxRows;
  l.max_text = static_cast<size_t>(limits::kMaxTextBytes);
  return l;
}

std::vector<uint8_t> case_to_binary(const Case& c) {
  Writer w;
  w.byte(kCaseBinaryVersion);
  uint8_t flags = 0;
  if (c.topology.ep) flags |= flag::ep;
  if (c.topology.sp) flags |= flag::sp;
  if (c.monolithic) flags |= flag::monolithic;
  if (c.dp_chunk) flags |= flag::dp_chunk;
  if (c.metadata) {
    flags |= flag::metadata;
    if (c.metadata->num_tokens_across_dp) flags |= flag::num_tokens_given;
    if (c.metadata->local_sizes_given) flags |= flag::local_sizes_given;
    if (c.metadata->local_sizes_given && c.metadata->local_sizes) flags |= flag::local_sizes_set;
  }
  uint8_t kinds = static_cast<uint8_t>(static_cast<uint8_t>(c.path) | (static_cast<uint8_t>(c.padding.mode) << 2));
  if (!c.note.empty()) kinds |= kind::note;
  if (c.expect) kinds |= kind::expect;
  if (c.idle_dummy) kinds |= kind::idle_dummy;
  if (c.profile) kinds |= kind::profile;
  w.byte(flags);
  w.byte(kinds);
  w.varint(c.topology.dp, 1);
  w.varint(c.topology.tp, 1);
  w.varint(c.model.layers, 1);
  w.varint(c.model.top_k, 1);
  w.varint(c.model.experts, 1);
  w.varint(c.max_num_tokens, 1);
  w.varint(c.layer);
  w.varint(c.microbatches, 1);
  if (c.dp_chunk) w.varint(*c.dp_chunk, 1);
  for (int64_t t : c.tokens) w.varint(t);
  if (c.padding.mode == PaddingMode::cudagraph) {
    const auto& sizes = c.padding.cudagraph_sizes;
    w.varint(static_cast<int64_t>(sizes.size()), 1);
    for (size_t i = 0; i < sizes.size(); ++i) w.varint(sizes[i], i == 0 ? 1 : sizes[i - 1] + 1);
  }
  if (c.metadata) {
    auto list = [&w](const std::vector<int64_t>& values) {
      w.varint(static_cast<int64_t>(values.size()));
      for (int64_t v : values) w.varint(v);
    };
    if (c.metadata->num_tokens_across_dp) list(*c.metadata->num_tokens_across_dp);
    if (c.metadata->local_sizes_given && c.metadata->local_sizes) list(*c.metadata->local_sizes);
  }
  if (!c.note.empty()) w.text(c.note);
  if (c.expect) {
    w.text(c.expect->impl);
    w.text(std::string(to_string(c.expect->verdict)));
    w.text(std::string(to_string(c.expect->severity)));
  }
  if (c.profile) w.varint(static_cast<int64_t>(*c.profile));
  return w.take();
}

Result<Case> case_from_binary(std::span<const uint8_t> bytes, const BinaryLimits& limits) {
  Reader r(bytes);
  return decode(r, limits);
}

Result<Case> case_from_fuzz_input(std::span<const uint8_t> bytes) { return case_from_binary(bytes, full_binary_limits()); }

bool fits_binary_limits(const Case& c, const BinaryLimits& limits) {
  Case bare = c;
  bare.note.clear();
  bare.expect.reset();
  const Result<Case> again = case_from_binary(case_to_binary(bare), limits);
  return again.ok() && *again == bare;
}

}  // namespace r3
