#include "fuzz/codec/case_binary.hpp"

#include <algorithm>
#include <string>
#include <string_view>

#include "reference/engines/sglang/validate.hpp"
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

constexpr int kProfileCount = 5;  // Profile's values, in their order

// The note, "expect" and profile: the same bytes for both engines.
Status decode_trailer(Reader& r, const BinaryLimits& lim, bool note, bool expect, bool profile, Case& c) {
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
    R3_TRY(int64_t value, r.folded("profile", 0, kProfileCount - 1));
    c.profile = static_cast<Profile>(value);
  }
  return ok_status();
}

void encode_trailer(Writer& w, const Case& c) {
  if (!c.note.empty()) w.text(c.note);
  if (c.expect) {
    w.text(c.expect->impl);
    w.text(std::string(to_string(c.expect->verdict)));
    w.text(std::string(to_string(c.expect->severity)));
  }
  if (c.profile) w.varint(static_cast<int64_t>(*c.profile));
}

// ---- SGLang cases: versions 2 and 3 (case_binary.hpp) ------------------------------------

namespace sglang_flag {
inline constexpr uint8_t dp_attention = 1 << 0;
inline constexpr uint8_t tbo = 1 << 1;
inline constexpr uint8_t cuda_graph = 1 << 2;
inline constexpr uint8_t last_bucket = 1 << 3;
inline constexpr uint8_t note = 1 << 4;
inline constexpr uint8_t expect = 1 << 5;
inline constexpr uint8_t profile = 1 << 6;
inline constexpr uint8_t chunked = 1 << 7;
}  // namespace sglang_flag

// A strictly increasing list of at most `max_count` multiples of `unit`, each at most `max_value`:
// count, then the first in units, then gaps in units, each folded into what is left.
Result<std::vector<int64_t>> read_buckets(Reader& r, std::string_view what, int max_count, int64_t unit,
                                          int64_t max_value) {
  const int64_t most_units = std::max<int64_t>(1, max_value / unit);
  R3_TRY(int64_t count, r.folded(what, 0, std::min<int64_t>(max_count, most_units)));
  std::vector<int64_t> out;
  int64_t prev = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (prev >= most_units) break;  // no room left: the list ends here (encode never writes more)
    R3_TRY(int64_t next, r.folded(what, prev + 1, most_units));
    out.push_back(next * unit);
    prev = next;
  }
  return out;
}

void write_buckets(Writer& w, const std::vector<int64_t>& buckets, int64_t unit) {
  w.varint(static_cast<int64_t>(buckets.size()));
  int64_t prev = 0;
  for (int64_t b : buckets) {
    w.varint(b / unit, prev + 1);
    prev = b / unit;
  }
}

int64_t bucket_unit(const Case& c) {
  return (c.sglang->tbo ? 2 : 1) * (sglang::counts_aligned(c) ? c.topology.tp : 1);
}

// Version 3 (case_binary.hpp) is needed exactly when chunked prefill is on and max_prefill_tokens
// is not the default version 2 decodes it as.
bool needs_version_3(const sglang::Forward& f) {
  return f.chunked_prefill_size != -1 && f.max_prefill_tokens != sglang::Forward{}.max_prefill_tokens;
}

Result<Case> decode_sglang(Reader& r, const BinaryLimits& lim, uint8_t version) {
  R3_TRY(uint8_t flags, r.byte("the flags byte"));
  R3_TRY(uint8_t kinds, r.byte("the kinds byte"));
  Case c;
  c.engine = Engine::sglang;
  sglang::Forward& f = c.sglang.emplace();
  f.dp_attention = flags & sglang_flag::dp_attention;
  f.tbo = flags & sglang_flag::tbo;
  f.a2a = static_cast<sglang::A2a>((kinds & 15u) % sglang::kA2aCount);
  f.kind = static_cast<sglang::ForwardKind>(((kinds >> 4) & 3u) % 3);
  R3_TRY(int64_t dp, r.folded("topology.dp", f.dp_attention ? 2 : 1, f.dp_attention ? std::max(2, lim.max_dp) : 1));
  R3_TRY(int64_t tp, r.folded("topology.tp", 1, lim.max_tp));
  R3_TRY(int64_t layers, r.folded("model.layers", 1, lim.max_layers));
  R3_TRY(int64_t top_k, r.folded("model.top_k", 1, lim.max_top_k));
  R3_TRY(int64_t experts, r.folded("model.experts", top_k, std::max<int64_t>(top_k, lim.max_experts)));
  R3_TRY(int64_t layer, r.folded("layer", 0, layers - 1));
  c.topology.dp = static_cast<int>(dp);
  c.topology.tp = static_cast<int>(tp);
  c.model = {static_cast<int>(layers), static_cast<int>(top_k), static_cast<int>(experts)};
  c.layer = static_cast<int>(layer);
  R3_TRY(f.max_running_requests, r.folded("max_running_requests", 1, lim.max_rows));
  if (flags & sglang_flag::chunked) {
    R3_TRY(f.chunked_prefill_size, r.folded("chunked_prefill_size", 1, lim.max_rows));
    if (version == kCaseBinarySglangV3) {
      R3_TRY(f.max_prefill_tokens, r.folded("max_prefill_tokens", 1, lim.max_rows));
    }
  } else {
    R3_TRY(f.max_prefill_tokens, r.folded("max_prefill_tokens", 1, lim.max_rows));
  }
  if (f.kind == sglang::ForwardKind::verify) {
    R3_TRY(f.spec_width, r.folded("spec_width", 2, 64));
  }
  const bool extend = f.kind == sglang::ForwardKind::extend;
  const int64_t most = extend ? (f.chunked_prefill_size == -1 ? f.max_prefill_tokens : f.chunked_prefill_size)
                              : f.max_running_requests;
  std::vector<int64_t>& counts = extend ? c.tokens : f.requests;
  for (int d = 0; d < c.topology.dp; ++d) {
    R3_TRY(int64_t n, r.folded(extend ? "tokens" : "requests", 0, most));
    counts.push_back(n);
  }
  if (flags & sglang_flag::cuda_graph) {
    sglang::CudaGraphs g;
    R3_TRY(g.decode, read_buckets(r, "cuda_graph.decode", lim.max_cudagraph_sizes, bucket_unit(c), lim.max_cudagraph_size));
    R3_TRY(g.prefill, read_buckets(r, "cuda_graph.prefill", lim.max_cudagraph_sizes, 1, lim.max_cudagraph_size));
    if (g.decode.empty() && g.prefill.empty()) g.prefill.push_back(1);  // a graph list is never empty
    if ((flags & sglang_flag::last_bucket) && !g.decode.empty()) {
      R3_TRY(int64_t i, r.folded("last_decode_bucket", 0, static_cast<int64_t>(g.decode.size()) - 1));
      f.last_decode_bucket = g.decode[static_cast<size_t>(i)];
    }
    f.cuda_graph = std::move(g);
  }
  R3_TRY_STATUS(decode_trailer(r, lim, flags & sglang_flag::note, flags & sglang_flag::expect,
                               kinds & sglang_flag::profile, c));
  R3_TRY_STATUS(r.finish());
  R3_TRY_STATUS(validate(c));
  return c;
}

std::vector<uint8_t> sglang_to_binary(const Case& c) {
  const sglang::Forward& f = *c.sglang;
  Writer w;
  const bool v3 = needs_version_3(f);
  w.byte(v3 ? kCaseBinarySglangV3 : kCaseBinarySglangVersion);
  uint8_t flags = 0;
  if (f.dp_attention) flags |= sglang_flag::dp_attention;
  if (f.tbo) flags |= sglang_flag::tbo;
  if (f.cuda_graph) flags |= sglang_flag::cuda_graph;
  if (f.cuda_graph && f.last_decode_bucket) flags |= sglang_flag::last_bucket;
  if (!c.note.empty()) flags |= sglang_flag::note;
  if (c.expect) flags |= sglang_flag::expect;
  if (f.chunked_prefill_size != -1) flags |= sglang_flag::chunked;
  uint8_t kinds = static_cast<uint8_t>(static_cast<uint8_t>(f.a2a) | (static_cast<uint8_t>(f.kind) << 4));
  if (c.profile) kinds |= sglang_flag::profile;
  w.byte(flags);
  w.byte(kinds);
  w.varint(c.topology.dp, f.dp_attention ? 2 : 1);
  w.varint(c.topology.tp, 1);
  w.varint(c.model.layers, 1);
  w.varint(c.model.top_k, 1);
  w.varint(c.model.experts, c.model.top_k);
  w.varint(c.layer);
  w.varint(f.max_running_requests, 1);
  if (f.chunked_prefill_size != -1) {
    w.varint(f.chunked_prefill_size, 1);
    if (v3) w.varint(f.max_prefill_tokens, 1);
  } else {
    w.varint(f.max_prefill_tokens, 1);
  }
  if (f.kind == sglang::ForwardKind::verify) w.varint(f.spec_width, 2);
  for (int64_t n : f.kind == sglang::ForwardKind::extend ? c.tokens : f.requests) w.varint(n);
  if (f.cuda_graph) {
    write_buckets(w, f.cuda_graph->decode, bucket_unit(c));
    write_buckets(w, f.cuda_graph->prefill, 1);
    if (f.last_decode_bucket) {
      const auto& d = f.cuda_graph->decode;
      w.varint(std::find(d.begin(), d.end(), *f.last_decode_bucket) - d.begin());
    }
  }
  encode_trailer(w, c);
  return w.take();
}

Result<Case> decode(Reader& r, const BinaryLimits& lim) {
  R3_TRY(uint8_t version, r.byte("the version byte"));
  if (version == kCaseBinarySglangVersion || version == kCaseBinarySglangV3) return decode_sglang(r, lim, version);
  if (version != kCaseBinaryVersion) {
    return Error{"binary case: version " + std::to_string(version) + " is not supported (expected " +
                 std::to_string(kCaseBinaryVersion) + " for vLLM, " + std::to_string(kCaseBinarySglangVersion) +
                 " or " + std::to_string(kCaseBinarySglangV3) + " for SGLang)"};
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
  R3_TRY_STATUS(decode_trailer(r, lim, kinds & kind::note, kinds & kind::expect, kinds & kind::profile, c));
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
  if (c.engine == Engine::sglang) return sglang_to_binary(c);
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
  encode_trailer(w, c);
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
