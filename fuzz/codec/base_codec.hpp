// The base case's codec: the case format's own fields (design.md: topology, tokens, padding,
// path, DP chunks, micro-batches, metadata), which the default engine's cases are made of. An
// engine built on the base case calls these from its codec part (engine_codec.hpp); the generic
// writer also falls back to them for an engine without a codec, so its cases can still be
// written and read back as far as the error that names the engine.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz/codec/binary_io.hpp"
#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/engine_codec.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

// JSON (base_json.cpp): the document's keys are checked and "format" too; validate() is not run.
Result<Case> read_base_case_json(const nlohmann::json& doc);
// design.md's key order; "engine" only for a case that is not the default engine's.
nlohmann::ordered_json base_case_json(const Case& c);

// Binary (base_binary.cpp, layout in case_binary.hpp): the fields after the version byte, and
// the version byte followed by them.
Result<Case> decode_base_case(BinaryReader& r, const BinaryLimits& lim);
void encode_base_case(BinaryWriter& w, const Case& c, uint8_t version);

// The codec part of an engine whose cases are the base case (vLLM's, TensorRT-LLM's): the base
// document in JSON, and the base fields after the engine's own binary version byte.
class BaseCaseCodec final : public EngineCodec {
 public:
  BaseCaseCodec(uint8_t version, std::string_view label) : version_{version}, label_(label) {}
  Result<Case> read_json(const nlohmann::json& doc) const override { return read_base_case_json(doc); }
  nlohmann::ordered_json to_json(const Case& c) const override { return base_case_json(c); }
  std::span<const uint8_t> versions() const override { return version_; }
  std::string_view label() const override { return label_; }
  Result<Case> decode(BinaryReader& r, const BinaryLimits& limits, uint8_t) const override {
    return decode_base_case(r, limits);
  }
  void encode(BinaryWriter& w, const Case& c) const override { encode_base_case(w, c, version_[0]); }

 private:
  uint8_t version_[1];
  std::string_view label_;
};

}  // namespace r3
