// SGLang cases in the binary format: versions 2 and 3 (codec.hpp).
#include "fuzz/engines/sglang/codec.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/validate.hpp"

namespace r3::sglang {
namespace {

namespace flag {
inline constexpr uint8_t dp_attention = 1 << 0;
inline constexpr uint8_t tbo = 1 << 1;
inline constexpr uint8_t cuda_graph = 1 << 2;
inline constexpr uint8_t last_bucket = 1 << 3;
inline constexpr uint8_t note = 1 << 4;
inline constexpr uint8_t expect = 1 << 5;
inline constexpr uint8_t profile = 1 << 6;
inline constexpr uint8_t chunked = 1 << 7;
}  // namespace flag

// A strictly increasing list of at most `max_count` multiples of `unit`, each at most `max_value`:
// count, then the first in units, then gaps in units, each folded into what is left.
Result<std::vector<int64_t>> read_buckets(BinaryReader& r, std::string_view what, int max_count, int64_t unit,
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

void write_buckets(BinaryWriter& w, const std::vector<int64_t>& buckets, int64_t unit) {
  w.varint(static_cast<int64_t>(buckets.size()));
  int64_t prev = 0;
  for (int64_t b : buckets) {
    w.varint(b / unit, prev + 1);
    prev = b / unit;
  }
}

int64_t bucket_unit(const Case& c) { return (forward_of(c)->tbo ? 2 : 1) * (counts_aligned(c) ? c.topology.tp : 1); }

// Version 3 (codec.hpp) is needed exactly when chunked prefill is on and max_prefill_tokens is
// not the default version 2 decodes it as.
bool needs_version_3(const Forward& f) {
  return f.chunked_prefill_size != -1 && f.max_prefill_tokens != Forward{}.max_prefill_tokens;
}

}  // namespace

Result<Case> decode_case(BinaryReader& r, const BinaryLimits& lim, uint8_t version) {
  R3_TRY(uint8_t flags, r.byte("the flags byte"));
  R3_TRY(uint8_t kinds, r.byte("the kinds byte"));
  Case c;
  c.engine = engine();
  Forward& f = c.engine_fields.emplace<Forward>();
  f.dp_attention = flags & flag::dp_attention;
  f.tbo = flags & flag::tbo;
  f.a2a = static_cast<A2a>((kinds & 15u) % kA2aCount);
  f.kind = static_cast<ForwardKind>(((kinds >> 4) & 3u) % 3);
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
  if (flags & flag::chunked) {
    R3_TRY(f.chunked_prefill_size, r.folded("chunked_prefill_size", 1, lim.max_rows));
    if (version == kBinaryVersion3) {
      R3_TRY(f.max_prefill_tokens, r.folded("max_prefill_tokens", 1, lim.max_rows));
    }
  } else {
    R3_TRY(f.max_prefill_tokens, r.folded("max_prefill_tokens", 1, lim.max_rows));
  }
  if (f.kind == ForwardKind::verify) {
    R3_TRY(f.spec_width, r.folded("spec_width", 2, 64));
  }
  const bool extend = f.kind == ForwardKind::extend;
  const int64_t most = extend ? (f.chunked_prefill_size == -1 ? f.max_prefill_tokens : f.chunked_prefill_size)
                              : f.max_running_requests;
  std::vector<int64_t>& counts = extend ? c.tokens : f.requests;
  for (int d = 0; d < c.topology.dp; ++d) {
    R3_TRY(int64_t n, r.folded(extend ? "tokens" : "requests", 0, most));
    counts.push_back(n);
  }
  if (flags & flag::cuda_graph) {
    CudaGraphs g;
    R3_TRY(g.decode, read_buckets(r, "cuda_graph.decode", lim.max_cudagraph_sizes, bucket_unit(c), lim.max_cudagraph_size));
    R3_TRY(g.prefill, read_buckets(r, "cuda_graph.prefill", lim.max_cudagraph_sizes, 1, lim.max_cudagraph_size));
    if (g.decode.empty() && g.prefill.empty()) g.prefill.push_back(1);  // a graph list is never empty
    if ((flags & flag::last_bucket) && !g.decode.empty()) {
      R3_TRY(int64_t i, r.folded("last_decode_bucket", 0, static_cast<int64_t>(g.decode.size()) - 1));
      f.last_decode_bucket = g.decode[static_cast<size_t>(i)];
    }
    f.cuda_graph = std::move(g);
  }
  R3_TRY_STATUS(decode_trailer(r, lim, flags & flag::note, flags & flag::expect, kinds & flag::profile, c));
  return c;
}

void encode_case(BinaryWriter& w, const Case& c) {
  const Forward& f = *forward_of(c);
  const bool v3 = needs_version_3(f);
  w.byte(v3 ? kBinaryVersion3 : kBinaryVersion);
  uint8_t flags = 0;
  if (f.dp_attention) flags |= flag::dp_attention;
  if (f.tbo) flags |= flag::tbo;
  if (f.cuda_graph) flags |= flag::cuda_graph;
  if (f.cuda_graph && f.last_decode_bucket) flags |= flag::last_bucket;
  if (!c.note.empty()) flags |= flag::note;
  if (c.expect) flags |= flag::expect;
  if (f.chunked_prefill_size != -1) flags |= flag::chunked;
  uint8_t kinds = static_cast<uint8_t>(static_cast<uint8_t>(f.a2a) | (static_cast<uint8_t>(f.kind) << 4));
  if (c.profile) kinds |= flag::profile;
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
  if (f.kind == ForwardKind::verify) w.varint(f.spec_width, 2);
  for (int64_t n : f.kind == ForwardKind::extend ? c.tokens : f.requests) w.varint(n);
  if (f.cuda_graph) {
    write_buckets(w, f.cuda_graph->decode, bucket_unit(c));
    write_buckets(w, f.cuda_graph->prefill, 1);
    if (f.last_decode_bucket) {
      const auto& d = f.cuda_graph->decode;
      w.varint(std::find(d.begin(), d.end(), *f.last_decode_bucket) - d.begin());
    }
  }
  encode_trailer(w, c);
}

}  // namespace r3::sglang
