// An engine's case codec: how its cases read and write as JSON (case_json.hpp) and as the
// binary bytes libFuzzer mutates (case_binary.hpp). The generic codecs find the engine (the JSON
// document's "engine", the binary's leading version byte), hand its codec the rest, then set
// Case::engine, check that every byte was read and run validate(), for every engine alike. Each
// engine's part lives in fuzz/engines/NAME/codec.cpp; an engine built on the base case
// (base_codec.hpp) reads and writes with it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"

namespace r3 {

class BinaryReader;   // fuzz/codec/binary_io.hpp
class BinaryWriter;   // fuzz/codec/binary_io.hpp
struct BinaryLimits;  // fuzz/codec/case_binary.hpp

class EngineCodec {
 public:
  virtual ~EngineCodec() = default;

  // Reads the engine's case from a document whose "engine" names it, refusing unknown keys and
  // a wrong "format" (json_fields.hpp); the caller sets Case::engine and validates.
  virtual Result<Case> read_json(const nlohmann::json& doc) const = 0;
  // The case's document, keys in the text form's order ("format" first, the trailer last).
  virtual nlohmann::ordered_json to_json(const Case& c) const = 0;

  // The leading version bytes that select this engine (none another engine's), in the order an
  // "unsupported version" error lists them.
  virtual std::span<const uint8_t> versions() const = 0;
  // How an "unsupported version" error names the engine ("1 for <label>").
  virtual std::string_view label() const = 0;
  // Decodes the bytes after the version byte (one of versions()), folding values into `limits`;
  // the caller then sets Case::engine, checks for trailing bytes and validates.
  virtual Result<Case> decode(BinaryReader& r, const BinaryLimits& limits, uint8_t version) const = 0;
  // Writes the canonical bytes of a valid case of the engine, its version byte first.
  virtual void encode(BinaryWriter& w, const Case& c) const = 0;
};

// The codec part of `engine`; null when it has none (fuzz/engines/registry.cpp).
const EngineCodec* engine_codec(Engine engine);

}  // namespace r3
