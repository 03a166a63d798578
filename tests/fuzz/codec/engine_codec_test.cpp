// The generic codecs reach each engine through its codec part (fuzz/codec/engine_codec.hpp): the
// built-in engines own their binary versions, an engine added at run time with a codec reads and
// writes through it, and one without a codec is named when its case is read. A suite of its own:
// the engines it registers would renumber the profiles of the other codec tests.
#include "fuzz/codec/engine_codec.hpp"

#include <gtest/gtest.h>

#include "fuzz/codec/base_codec.hpp"
#include "fuzz/codec/binary_io.hpp"
#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/engines/registry.hpp"
#include "reference/engine_model.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"
#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

using Bytes = std::vector<uint8_t>;

// An engine of base cases under its own name: vLLM's rules, no policies.
class BaseCaseModel final : public EngineModel {
 public:
  BaseCaseModel(std::string_view name, std::span<const ProfileInfo> profiles) : name_(name), profiles_(profiles) {}
  std::string_view name() const override { return name_; }
  std::span<const ProfileInfo> profiles() const override { return profiles_; }
  Status validate(const Case& c) const override { return base().validate(c); }
  Status derive_step_into(Step& s, const Case& c) const override { return base().derive_step_into(s, c); }
  Status check_profile(const Case& c, Profile p) const override { return base().check_profile(c, p); }
  Case fit_to_profile(Case c, Profile p) const override { return base().fit_to_profile(std::move(c), p); }
  std::string summarize(const Case& c) const override { return base().summarize(c); }
  int64_t most_buffer_rows(const Case& c) const override { return base().most_buffer_rows(c); }
  bool small_enough_to_materialise(const Case& c) const override { return base().small_enough_to_materialise(c); }
  std::span<const PolicyInfo> policies() const override { return {}; }
  std::vector<std::string_view> released_policies() const override { return {}; }
  std::string_view fixed_policy() const override { return {}; }
  bool has_fault(Fault) const override { return false; }
  void apply_decision_fault(Fault, const CaptureCall&, CaptureDecision&) const override {}
  void decide_with_fault(const CapturePolicy&, Fault, const CaptureCall&, CaptureDecision&) const override {}

 private:
  static const EngineModel& base() { return vllm::model(); }
  std::string_view name_;
  std::span<const ProfileInfo> profiles_;
};

// The base case's codec under binary version 9.
class BaseCaseCodec final : public EngineCodec {
 public:
  Result<Case> read_json(const nlohmann::json& doc) const override { return read_base_case_json(doc); }
  nlohmann::ordered_json to_json(const Case& c) const override { return base_case_json(c); }
  std::span<const uint8_t> versions() const override { return kVersions; }
  std::string_view label() const override { return "Toy"; }
  Result<Case> decode(BinaryReader& r, const BinaryLimits& limits, uint8_t) const override {
    return decode_base_case(r, limits);
  }
  void encode(BinaryWriter& w, const Case& c) const override { encode_base_case(w, c, kVersions[0]); }

 private:
  static constexpr uint8_t kVersions[] = {9};
};

constexpr ProfileInfo kCodedProfiles[] = {{"toy-coded", "a test's engine with a codec"}};
constexpr ProfileInfo kBareProfiles[] = {{"toy-bare", "a test's engine without a codec"}};

struct Toys {
  Engine coded;  // has a codec part (BaseCaseCodec)
  Engine bare;   // has no fuzz-level parts
};

// Registered once for the whole suite, the coded engine first.
const Toys& toys() {
  static const Toys registered = [] {
    static const BaseCaseModel coded("toy-coded", kCodedProfiles);
    static const BaseCaseModel bare("toy-bare", kBareProfiles);
    static const BaseCaseCodec codec;
    EXPECT_TRUE(add_engine(coded));
    EXPECT_TRUE(add_engine(bare));
    Toys t{parse_engine("toy-coded").value(), parse_engine("toy-bare").value()};
    FuzzEngineParts parts;
    parts.codec = &codec;
    EXPECT_TRUE(add_engine_parts(t.coded, parts));
    return t;
  }();
  return registered;
}

Case example(Engine engine) {
  Case c = test::make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::gathered, true);
  c.engine = engine;
  return c;
}

TEST(EngineCodec, TheBuiltInEnginesOwnTheirVersions) {
  const EngineCodec* vllm_codec = engine_codec(vllm::engine());
  const EngineCodec* sglang_codec = engine_codec(sglang::engine());
  ASSERT_NE(vllm_codec, nullptr);
  ASSERT_NE(sglang_codec, nullptr);
  EXPECT_EQ(Bytes(vllm_codec->versions().begin(), vllm_codec->versions().end()), (Bytes{1}));
  EXPECT_EQ(vllm_codec->label(), "vLLM");
  EXPECT_EQ(Bytes(sglang_codec->versions().begin(), sglang_codec->versions().end()), (Bytes{2, 3}));
  EXPECT_EQ(sglang_codec->label(), "SGLang");
}

TEST(EngineCodec, AnAddedEngineReadsAndWritesThroughItsCodec) {
  const Case c = example(toys().coded);
  const std::string text = case_to_json_text(c);
  EXPECT_NE(text.find("\"format\": \"r3fuzz-case/1\",\n  \"engine\": \"toy-coded\",\n"), std::string::npos) << text;
  const Result<Case> back = case_from_json_text(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, c);

  const Bytes bytes = case_to_binary(c);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes[0], 9);
  const Result<Case> decoded = case_from_fuzz_input(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, c);
  // The default engine's bytes are unchanged, and still its own.
  EXPECT_EQ(case_to_binary(example(Engine{})), (Bytes{1, 0x07, 0x01, 1, 1, 3, 1, 63, 7, 1, 0, 3, 2}));
  EXPECT_EQ(case_from_fuzz_input(case_to_binary(example(Engine{}))).value().engine, Engine{});
}

TEST(EngineCodec, AnUnknownVersionListsEveryEngineWithACodec) {
  (void)toys();
  const Result<Case> c = case_from_binary(Bytes{6, 0, 0});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message,
            "binary case: version 6 is not supported (expected 1 for vLLM, 2 or 3 for SGLang, 4 for TensorRT-LLM, 5 "
            "for vllm-ascend, 9 for Toy)");
}

TEST(EngineCodec, AnEngineWithoutACodecIsNamed) {
  const Case c = example(toys().bare);
  // Written as its base fields under its name, which reading then refuses.
  const std::string text = case_to_json_text(c);
  EXPECT_NE(text.find("\"engine\": \"toy-bare\""), std::string::npos) << text;
  const Result<Case> back = case_from_json_text(text);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().message, "engine: toy-bare has no case codec, so its cases cannot be read");
  // No bytes: the binary format cannot say which engine they belong to.
  EXPECT_TRUE(case_to_binary(c).empty());
  EXPECT_FALSE(fits_binary_limits(c, full_binary_limits()));
}

}  // namespace
}  // namespace r3
