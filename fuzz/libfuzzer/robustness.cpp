#include "fuzz/libfuzzer/robustness.hpp"

#include <string_view>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

// Binary: what decodes is valid, re-encodes to a fixed point, and survives the JSON text form.
bool binary(std::span<const uint8_t> bytes, const BinaryLimits& limits, bool derive) {
  auto c = case_from_binary(bytes, limits);
  if (!c) return false;
  R3_CHECK(validate(*c).ok(), "a decoded case is valid");
  const std::vector<uint8_t> encoded = case_to_binary(*c);
  auto again = case_from_binary(encoded, limits);
  R3_CHECK(again.ok() && *again == *c, "decode(encode(c)) == c");
  auto from_json = case_from_json_text(case_to_json_text(*c));
  R3_CHECK(from_json.ok() && *from_json == *c, "the JSON form of a decoded case reads back equal");
  if (derive) R3_CHECK(derive_step(*c).ok(), "derive_step accepts every valid case");
  return true;
}

bool json(std::span<const uint8_t> bytes) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto c = case_from_json_text(text);
  if (!c) {
    R3_CHECK(!c.error().message.empty(), "errors say what is wrong");
    return false;
  }
  auto again = case_from_json_text(case_to_json_text(*c));
  R3_CHECK(again.ok() && *again == *c, "JSON text round trip");
  return true;
}

// Metadata overrides as a production log would give them: a small base case chosen by the
// first byte, then num_tokens_across_dp and local_sizes of any length and content.
bool metadata(std::span<const uint8_t> bytes) {
  if (bytes.size() < 3) return false;
  Case c;
  c.model = {2, 2, 16};
  c.max_num_tokens = 16;
  switch (bytes[0] % 4) {
    case 0: c.topology = {2, 2, true, true}; c.path = Path::gathered; c.tokens = {5, 3}; break;
    case 1: c.topology = {2, 4, true, true}; c.path = Path::sp_shard; c.tokens = {1, 9}; break;
    case 2: c.topology = {3, 1, false, false}; c.path = Path::local; c.tokens = {4, 0, 7}; break;
    default: c.topology = {3, 2, true, false}; c.path = Path::gathered; c.tokens = {2, 2, 16}; c.monolithic = true;
  }
  MetadataOverride m;
  size_t pos = 3;
  auto list = [&](size_t count) {
    std::vector<int64_t> values;
    for (size_t i = 0; i < count && pos < bytes.size(); ++i) values.push_back(bytes[pos++]);
    return values;
  };
  if (bytes[1] & 1u) m.num_tokens_across_dp = list(bytes[2] & 0x0Fu);
  m.local_sizes_given = bytes[1] & 2u;
  if (m.local_sizes_given && (bytes[1] & 4u)) m.local_sizes = list(bytes[2] >> 4);
  c.metadata = m;
  if (!validate(c)) return false;
  auto step = derive_step(c);
  R3_CHECK(step.ok(), "derive_step accepts every valid case");
  R3_CHECK(!step->rejection || !step->rejection->empty(), "a rejection names its reason");
  return true;
}

}  // namespace

int exercise_decoders(std::span<const uint8_t> bytes) {
  int accepted = 0;
  accepted += binary(bytes, concrete_binary_limits(), true);
  accepted += binary(bytes, full_binary_limits(), false);  // may be production-sized: no derivation
  accepted += json(bytes);
  accepted += metadata(bytes);
  return accepted;
}

}  // namespace r3
