// The trtllm engine's case codec: its per-step cases are the base case (fuzz/codec/base_codec.hpp),
// in the base JSON layout with "engine": "trtllm", and binary version 4 (fuzz/codec/case_binary.hpp).
#include "fuzz/codec/base_codec.hpp"
#include "fuzz/codec/binary_io.hpp"
#include "fuzz/codec/engine_codec.hpp"
#include "fuzz/engines/trtllm/parts.hpp"

namespace r3::trtllm {
namespace {

constexpr uint8_t kVersions[] = {4};

class Codec final : public EngineCodec {
 public:
  Result<Case> read_json(const nlohmann::json& doc) const override { return read_base_case_json(doc); }
  nlohmann::ordered_json to_json(const Case& c) const override { return base_case_json(c); }

  std::span<const uint8_t> versions() const override { return kVersions; }
  std::string_view label() const override { return "TensorRT-LLM"; }
  Result<Case> decode(BinaryReader& r, const BinaryLimits& limits, uint8_t version) const override {
    (void)version;
    return decode_base_case(r, limits);
  }
  void encode(BinaryWriter& w, const Case& c) const override { encode_base_case(w, c, kVersions[0]); }
};

}  // namespace

const EngineCodec& codec_part() {
  static const Codec codec;
  return codec;
}

}  // namespace r3::trtllm
