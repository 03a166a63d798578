// The SGLang engine's codec part (fuzz/codec/engine_codec.hpp): its own JSON document and binary
// versions 2 and 3 (codec.hpp).
#include "fuzz/codec/engine_codec.hpp"
#include "fuzz/engines/sglang/codec.hpp"
#include "fuzz/engines/sglang/parts.hpp"

namespace r3::sglang {
namespace {

constexpr uint8_t kVersions[] = {kBinaryVersion, kBinaryVersion3};

class Codec final : public EngineCodec {
 public:
  Result<Case> read_json(const nlohmann::json& doc) const override { return read_case_document(doc); }
  nlohmann::ordered_json to_json(const Case& c) const override { return case_document(c); }

  std::span<const uint8_t> versions() const override { return kVersions; }
  std::string_view label() const override { return "SGLang"; }
  Result<Case> decode(BinaryReader& r, const BinaryLimits& limits, uint8_t version) const override {
    return decode_case(r, limits, version);
  }
  void encode(BinaryWriter& w, const Case& c) const override { encode_case(w, c); }
};

}  // namespace

const EngineCodec& codec_part() {
  static const Codec codec;
  return codec;
}

}  // namespace r3::sglang
