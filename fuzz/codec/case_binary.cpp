#include "fuzz/codec/case_binary.hpp"

#include <string>

#include "fuzz/codec/binary_io.hpp"
#include "fuzz/codec/engine_codec.hpp"
#include "reference/limits.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

bool reads_version(const EngineCodec& codec, uint8_t version) {
  for (uint8_t v : codec.versions())
    if (v == version) return true;
  return false;
}

// "1 for vLLM, 2 or 3 for SGLang": each engine's versions and label, in registry order.
std::string expected_versions() {
  std::string out;
  for (size_t e = 0; e < engine_count(); ++e) {
    const EngineCodec* codec = engine_codec(Engine::at(e));
    if (!codec || codec->versions().empty()) continue;
    const auto versions = codec->versions();
    if (!out.empty()) out += ", ";
    for (size_t i = 0; i < versions.size(); ++i) {
      if (i > 0) out += i + 1 == versions.size() ? " or " : ", ";
      out += std::to_string(versions[i]);
    }
    out += " for " + std::string(codec->label());
  }
  return out;
}

// The leading byte selects the engine whose codec reads the rest.
Result<Case> decode(BinaryReader& r, const BinaryLimits& lim) {
  R3_TRY(uint8_t version, r.byte("the version byte"));
  for (size_t e = 0; e < engine_count(); ++e) {
    const Engine engine = Engine::at(e);
    const EngineCodec* codec = engine_codec(engine);
    if (!codec || !reads_version(*codec, version)) continue;
    R3_TRY(Case c, codec->decode(r, lim, version));
    c.engine = engine;
    R3_TRY_STATUS(r.finish());
    R3_TRY_STATUS(validate(c));
    return c;
  }
  return Error{"binary case: version " + std::to_string(version) + " is not supported (expected " + expected_versions() +
               ")"};
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
  const EngineCodec* codec = engine_codec(c.engine);
  if (!codec) return {};  // no bytes: the case cannot be encoded, and no decoder accepts them
  BinaryWriter w;
  codec->encode(w, c);
  return w.take();
}

Result<Case> case_from_binary(std::span<const uint8_t> bytes, const BinaryLimits& limits) {
  BinaryReader r(bytes);
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
