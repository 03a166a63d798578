// The base case's codec: the case format's own fields (design.md: topology, tokens, padding,
// path, DP chunks, micro-batches, metadata), which the default engine's cases are made of. An
// engine built on the base case calls these from its codec part (engine_codec.hpp); the generic
// writer also falls back to them for an engine without a codec, so its cases can still be
// written and read back as far as the error that names the engine.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "fuzz/codec/binary_io.hpp"
#include "fuzz/codec/case_binary.hpp"
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

}  // namespace r3
