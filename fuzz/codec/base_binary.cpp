// The base case in the binary format (base_codec.hpp; the layout is case_binary.hpp's).
#include "fuzz/codec/base_codec.hpp"

#include <string>

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

Result<std::vector<int64_t>> read_list(BinaryReader& r, std::string_view what, int max_entries, int64_t max_value) {
  R3_TRY(int64_t count, r.folded(what, 0, max_entries));
  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    R3_TRY(int64_t v, r.folded(what, 0, max_value));
    values.push_back(v);
  }
  return values;
}

Result<std::vector<int64_t>> read_cudagraph_sizes(BinaryReader& r, const BinaryLimits& lim) {
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

}  // namespace

Result<Case> decode_base_case(BinaryReader& r, const BinaryLimits& lim) {
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
  return c;
}

void encode_base_case(BinaryWriter& w, const Case& c, uint8_t version) {
  w.byte(version);
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
}

}  // namespace r3
