#include "fuzz/generate/case_domain.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bitset>
#include <set>
#include <string>
#include <vector>

#include "fuzz/generate/byte_source.hpp"
#include "fuzz/engines/ascend/draw_fields.hpp"
#include "fuzz/engines/sglang/draw_fields.hpp"
#include "fuzz/generate/engine_draw.hpp"
#include "fuzz/generate/enumerating_source.hpp"
#include "fuzz/generate/replay_source.hpp"
#include "fuzz/generate/seeded_source.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"
#include "tests/support/rc_source.hpp"

namespace r3 {
namespace {

// Why `c` is not a case of `domain`, or "" when it is one.
std::string outside(const Case& c, const CaseDomain& domain) {
  if (Status valid = validate(c); !valid.ok()) return "invalid: " + valid.error().message;
  if (Status inside = check_profile(c, domain.profile); !inside.ok()) return "outside the profile: " + inside.error().message;
  const DomainBounds& b = domain.bounds;
  if (c.topology.dp < b.min_dp || c.topology.dp > b.max_dp) return "dp out of bounds";
  if (c.topology.tp > b.max_tp) return "tp out of bounds";
  if (c.max_num_tokens > b.max_tokens) return "M out of bounds";
  if (c.model.layers > b.max_layers || c.model.top_k > b.max_top_k || c.model.experts > b.max_experts)
    return "model out of bounds";
  if (c.microbatches > b.max_microbatches) return "microbatches out of bounds";
  if (c.dp_chunk && (*c.dp_chunk < smallest_dp_chunk(c, b.max_chunks))) return "more DP chunks than max_chunks";
  return "";
}

CaseDomain any_domain() {
  CaseDomain domain{*rc::gen::element(kDefaultProfile, Profile::of(vllm::engine(), 1), Profile::any()),
                    bounds_of(*rc::gen::element(SizeClass::tiny, SizeClass::small, SizeClass::production))};
  domain.bounds.metadata_overrides = *rc::gen::arbitrary<bool>();
  if (*rc::gen::arbitrary<bool>()) domain.bounds.max_experts = limits::kMaxExperts;
  domain.bounds.require_sp = *rc::gen::inRange(0, 5) == 0;
  return domain;
}

// Done-when of issue 13: every source, under every profile, draws cases that validate and lie
// inside the profile and the bounds.
RC_GTEST_PROP(CaseDomain, EverySourceDrawsValidCasesInsideTheProfile, ()) {
  const CaseDomain domain = any_domain();
  RC_TAG(to_string(domain.profile));

  Rng rng(*rc::gen::arbitrary<uint64_t>());
  SeededSource seeded(rng);
  const std::string from_seed = outside(draw(seeded, domain), domain);
  RC_ASSERT(from_seed == "");

  const auto bytes = *rc::gen::arbitrary<std::vector<uint8_t>>();
  ByteSource from_bytes(bytes);
  const std::string of_bytes = outside(draw(from_bytes, domain), domain);
  RC_ASSERT(of_bytes == "");

  EnumeratingSource enumerator;  // some way into the enumeration
  const int skip = *rc::gen::inRange(0, 300);
  for (int i = 0; i < skip; ++i) {
    draw(enumerator, domain);
    if (!enumerator.advance()) break;
  }
  const std::string enumerated = outside(draw(enumerator, domain), domain);
  RC_ASSERT(enumerated == "");

  test::RcSource from_rc;
  const std::string of_rc = outside(draw(from_rc, domain), domain);
  RC_ASSERT(of_rc == "");
}

// The seeded source trusts its distributions to stay inside each choice's range (it skips the
// clamp); this source checks every one of them on the same draws.
class CheckingSeededSource final : public Source {
 public:
  explicit CheckingSeededSource(uint64_t seed) : rng_(seed) {}
  int64_t choose(const Choice& c, SeededDraw seeded) override {
    asked.set(static_cast<size_t>(c.field));
    EXPECT_LE(c.lo, c.hi) << "field " << static_cast<int>(c.field);
    if (!seeded) return rng_.range(c.lo, c.hi);
    const int64_t value = seeded(rng_);
    EXPECT_TRUE(value >= c.lo && value <= c.hi)
        << "field " << static_cast<int>(c.field) << ": " << value << " outside [" << c.lo << ", " << c.hi << "]";
    return value;
  }
  using Source::choose;
  void increasing_list(const Choice& entries, int, int, SeededList seeded, std::vector<int64_t>& out) override {
    asked.set(static_cast<size_t>(entries.field));
    out.clear();
    seeded(rng_, out);
  }
  void drawing(Engine engine) override { drawn = engine; }

  std::bitset<kFieldCount> asked;  // every field the draw asked for
  std::optional<Engine> drawn;     // the engine draw() said it draws

 private:
  Rng rng_;
};

TEST(CaseDomain, SeededDistributionsStayInsideTheirChoicesRanges) {
  for (Profile profile : {kDefaultProfile, Profile::of(vllm::engine(), 1), Profile::any()}) {
    for (SizeClass size : {SizeClass::tiny, SizeClass::small, SizeClass::production}) {
      CaseDomain domain{profile, bounds_of(size)};
      domain.bounds.metadata_overrides = true;
      domain.bounds.max_experts = limits::kMaxExperts;
      for (uint64_t seed = 0; seed < 2000; ++seed) {
        CheckingSeededSource source(seed);
        const Case c = draw(source, domain);
        ASSERT_EQ(outside(c, domain), "") << "seed " << seed;
      }
    }
  }
}

TEST(CaseDomain, TheSeededSourceDrawsTheSameCaseThroughEitherEntry) {
  const CaseDomain domain{Profile::any(), bounds_of(SizeClass::small)};
  for (uint64_t seed = 0; seed < 500; ++seed) {
    Rng a(seed), b(seed);
    SeededSource direct(a), through_base(b);
    EXPECT_EQ(draw(direct, domain), draw(static_cast<Source&>(through_base), domain)) << seed;
  }
}

TEST(CaseDomain, RequireSpGivesOnlySpTopologies) {
  CaseDomain domain{Profile::any(), bounds_of(SizeClass::tiny)};
  domain.bounds.require_sp = true;
  const std::vector<uint8_t> none;
  ByteSource simplest(none);
  const Case c = draw(simplest, domain);
  EXPECT_EQ(c.topology, (Topology{2, 2, true, true}));
  EXPECT_EQ(c.path, Path::gathered);
}

TEST(CaseDomain, SmallestDpChunkIsTheBoundOfTheChunkCount) {
  Case c;
  c.topology = {2, 1, false, false};
  c.max_num_tokens = 64;
  c.tokens = {64, 3};
  c.path = Path::local;
  EXPECT_EQ(smallest_dp_chunk(c, 16), 4);  // 64 rows in at most 16 chunks
  EXPECT_EQ(smallest_dp_chunk(c, 64), 1);
  EXPECT_EQ(smallest_dp_chunk(c, 5), 13);  // ceil(64 / 5)
}

TEST(CaseDomain, TheFieldTableNamesEveryGenericFieldInDrawOrder) {
  ASSERT_EQ(case_fields().size(), static_cast<size_t>(kGenericFieldCount));
  for (int i = 0; i < kGenericFieldCount; ++i) EXPECT_EQ(static_cast<int>(case_fields()[static_cast<size_t>(i)].field), i);
  EXPECT_EQ(to_string(Field::max_num_tokens, vllm::engine()), "max_num_tokens");
  EXPECT_EQ(case_fields()[static_cast<size_t>(Field::layer)].part, CasePart::model);
  EXPECT_EQ(lowest_value(Field::tp, vllm::engine()), 1);
  EXPECT_EQ(lowest_value(Field::tokens, vllm::engine()), 0);
  EXPECT_EQ(lowest_value(Field::layer, vllm::engine()), 0);
  EXPECT_TRUE(field_info(Field::tokens, vllm::engine())->per_rank);
}

// An own slot means what the case's engine says: SGLang's and vllm-ascend's share slot 0.
TEST(CaseDomain, AnOwnFieldsFactsAreTheCasesEngines) {
  static_assert(sglang::field::dp_attention == ascend::field::chip);
  EXPECT_EQ(to_string(sglang::field::tbo, sglang::engine()), "tbo");
  EXPECT_EQ(to_string(sglang::field::dp_attention, sglang::engine()), "dp_attention");
  EXPECT_EQ(to_string(ascend::field::chip, ascend::engine()), "chip");
  EXPECT_EQ(to_string(own_field(0), vllm::engine()), "own_0");  // vLLM has no own fields
  EXPECT_EQ(field_info(own_field(0), vllm::engine()), nullptr);
  EXPECT_EQ(field_info(sglang::field::dp_attention, sglang::engine())->part, CasePart::topology);
  EXPECT_EQ(field_info(ascend::field::chip, ascend::engine())->part, CasePart::path);
  EXPECT_TRUE(field_info(sglang::field::requests, sglang::engine())->per_rank);
  EXPECT_FALSE(field_info(own_field(7), ascend::engine()));
  EXPECT_EQ(lowest_value(sglang::field::spec_width, sglang::engine()), 1);
  EXPECT_EQ(lowest_value(sglang::field::decode_buckets, sglang::engine()), 1);
  EXPECT_EQ(lowest_value(sglang::field::tbo, sglang::engine()), 0);
  EXPECT_EQ(lowest_value(ascend::field::mc2_tokens, ascend::engine()), 0);
  const std::vector<FieldInfo> sglang_fields = fields_of(sglang::engine());
  EXPECT_EQ(sglang_fields.size(), case_fields().size() + sglang::field::kInfos.size());
  EXPECT_EQ(sglang_fields.back().name, "tbo");
  EXPECT_EQ(fields_of(vllm::engine()).size(), case_fields().size());
}

// Every engine's own fields are own slots, each named once, under names no generic field has
// (so the generic table names no engine's field), and they are every own slot its draw asks for.
TEST(CaseDomain, EachEngineDescribesEveryOwnSlotItDrawsOnce) {
  std::set<std::string_view> generic;
  for (const FieldInfo& f : case_fields()) {
    EXPECT_FALSE(is_own(f.field)) << f.name;
    generic.insert(f.name);
  }
  CaseDomain domain{Profile::any(), bounds_of(SizeClass::small)};
  int engines_with_own_fields = 0;
  for (Engine engine : drawn_engines(domain)) {
    const EngineDraw* part = engine_draw(engine);
    ASSERT_NE(part, nullptr);
    std::bitset<kFieldCount> declared;
    std::set<std::string_view> names;
    for (const FieldInfo& f : part->own_fields()) {
      EXPECT_TRUE(is_own(f.field)) << engine.name() << ": " << f.name;
      EXPECT_FALSE(declared.test(static_cast<size_t>(f.field))) << engine.name() << ": slot of " << f.name << " twice";
      declared.set(static_cast<size_t>(f.field));
      EXPECT_TRUE(names.insert(f.name).second) << engine.name() << ": " << f.name << " twice";
      EXPECT_FALSE(generic.contains(f.name)) << engine.name() << ": " << f.name << " is a generic field's name";
    }
    engines_with_own_fields += declared.any();
    domain.engine = engine;
    std::bitset<kFieldCount> asked;
    for (SizeClass size : {SizeClass::tiny, SizeClass::production}) {
      domain.bounds = bounds_of(size);
      for (uint64_t seed = 0; seed < 500; ++seed) {
        CheckingSeededSource source(seed);
        draw(source, domain);
        ASSERT_EQ(source.drawn, engine);
        asked |= source.asked;
      }
    }
    for (int k = 0; k < kOwnFieldCount; ++k) {
      const size_t slot = static_cast<size_t>(own_field(k));
      EXPECT_EQ(asked.test(slot), declared.test(slot)) << engine.name() << ": own slot " << k;
    }
  }
  EXPECT_GE(engines_with_own_fields, 2);  // SGLang's and vllm-ascend's, at least
}

TEST(CaseDomain, RecordedChoicesAreTheValuesACaseHolds) {
  Case c;
  c.topology = {2, 2, true, true};
  c.tokens = {5, 7};
  c.max_num_tokens = 8;
  c.path = Path::sp_shard;
  c.padding = {PaddingMode::cudagraph, {1, 2, 4}};
  EXPECT_EQ(recorded_choice(c, Field::tokens, 1), 7);
  EXPECT_EQ(recorded_choice(c, Field::tokens, 5), 7);  // a rank the case lacks: the last rank's
  EXPECT_EQ(recorded_choice(c, Field::path, 0), 1);    // the modular kernel's path
  EXPECT_EQ(recorded_choice(c, Field::padding, 0), 2);
  EXPECT_EQ(recorded_choice(c, Field::default_capture_sizes, 0), 1);  // vLLM's first sizes
  EXPECT_EQ(recorded_choice(c, Field::chunked, 0), 0);
  EXPECT_EQ(recorded_choice(c, Field::token_shape, 0), std::nullopt);
  c.padding.cudagraph_sizes = {1, 3};
  EXPECT_EQ(recorded_choice(c, Field::default_capture_sizes, 0), 0);
}

TEST(CaseDomain, TheDrawnEnginesAreTheDomainsOrTheProfilesDrawableOnes) {
  const CaseDomain any{Profile::any(), bounds_of(SizeClass::tiny)};
  EXPECT_EQ(drawn_engines(any),
            (std::vector<Engine>{vllm::engine(), sglang::engine(), trtllm::engine(), ascend::engine()}));
  EXPECT_EQ(drawn_engines({kDefaultProfile, bounds_of(SizeClass::tiny)}), std::vector<Engine>{vllm::engine()});
  EXPECT_EQ(drawn_engines({Profile::of(sglang::engine(), 1), bounds_of(SizeClass::tiny)}),
            std::vector<Engine>{sglang::engine()});
  EXPECT_EQ(drawn_engines({Profile::any(), bounds_of(SizeClass::tiny), sglang::engine()}),
            std::vector<Engine>{sglang::engine()});
  EXPECT_TRUE(check_drawable(any).ok());
}

// The engine choice under profile any is the first draw: vLLM (the registry's first) 65 times in
// 100, else r.range(1, 3) among SGLang, TensorRT-LLM and vllm-ascend, in registry order. The seeds
// of campaigns under any mean this draw (changing it, or adding an engine, changes every campaign
// under any).
TEST(CaseDomain, UnderAnyTheEngineIsVllmBut35TimesIn100) {
  const CaseDomain domain{Profile::any(), bounds_of(SizeClass::small)};
  int vllm_cases = 0, sglang_cases = 0, trtllm_cases = 0, ascend_cases = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng expected(seed), drawn(seed);
    const Engine others[] = {sglang::engine(), trtllm::engine(), ascend::engine()};
    Engine engine = vllm::engine();
    if (expected.chance(35)) engine = others[expected.range(1, 3) - 1];
    SeededSource source(drawn);
    const Case c = draw(source, domain);
    EXPECT_EQ(c.engine, engine) << seed;
    vllm_cases += engine == vllm::engine();
    sglang_cases += engine == sglang::engine();
    trtllm_cases += engine == trtllm::engine();
    ascend_cases += engine == ascend::engine();
  }
  EXPECT_GT(vllm_cases, 150);
  EXPECT_GT(sglang_cases, 0);
  EXPECT_GT(trtllm_cases, 0);
  EXPECT_GT(ascend_cases, 0);
}

// A replayed case keeps its engine and its engine's own fields.
TEST(CaseDomain, AnEnginesOwnFieldsAreRecordedByItsDrawPart) {
  Case c;
  c.engine = sglang::engine();
  sglang::Forward& f = c.engine_fields.emplace<sglang::Forward>();
  f.tbo = true;
  f.kind = sglang::ForwardKind::decode;
  f.requests = {3, 5};
  f.cuda_graph = sglang::CudaGraphs{{2, 4}, {}};
  f.last_decode_bucket = 4;
  EXPECT_EQ(recorded_choice(c, Field::engine, 0), 1);
  EXPECT_EQ(recorded_choice(c, sglang::field::tbo, 0), 1);
  EXPECT_EQ(recorded_choice(c, sglang::field::forward, 0), static_cast<int64_t>(sglang::ForwardKind::decode));
  EXPECT_EQ(recorded_choice(c, sglang::field::requests, 7), 5);  // a rank the case lacks: the last rank's
  EXPECT_EQ(recorded_choice(c, sglang::field::last_decode_bucket, 0), 2);  // bucket 1, plus one
  EXPECT_EQ(recorded_list(c, sglang::field::decode_buckets), (std::vector<int64_t>{1, 2}));  // in units of 2 (TBO)
  EXPECT_EQ(recorded_choice(c, Field::default_capture_sizes, 0), std::nullopt);  // vLLM's hint
  Case v;
  EXPECT_EQ(recorded_choice(v, Field::engine, 0), 0);
  EXPECT_EQ(recorded_choice(v, sglang::field::tbo, 0), std::nullopt);
  EXPECT_TRUE(recorded_list(v, sglang::field::decode_buckets).empty());
}

// Own slots mean what the drawn engine says: an SGLang parent's slot 0 (dp_attention) is no
// recorded chip for a vllm-ascend draw, and a redrawn part's own fields are the drawn engine's.
TEST(CaseDomain, AReplayReadsOwnSlotsOnlyFromAParentOfTheDrawnEngine) {
  static_assert(sglang::field::dp_attention == ascend::field::chip);
  Case c;
  c.engine = sglang::engine();
  sglang::Forward& f = c.engine_fields.emplace<sglang::Forward>();
  f.dp_attention = true;
  f.requests = {3, 5};
  Rng rng(1);
  ReplaySource sglang_draw(c, rng);
  EXPECT_EQ(sglang_draw.choose({sglang::field::dp_attention, 0, 0, 1}), 1);
  ReplaySource ascend_draw(c, rng);
  ascend_draw.drawing(ascend::engine());
  EXPECT_EQ(ascend_draw.choose({ascend::field::chip, 0, 0, 3}), 0);  // the plain value
  // Redrawing the tokens part redraws SGLang's requests of one rank, and no vllm-ascend field.
  ReplaySource one_rank(c, rng);
  one_rank.redraw_own(CasePart::tokens, 1);
  EXPECT_EQ(one_rank.choose({sglang::field::requests, 0, 0, 1000}), 3);
  EXPECT_EQ(one_rank.choose({sglang::field::dp_attention, 0, 0, 1}), 1);
  one_rank.drawing(ascend::engine());
  EXPECT_EQ(one_rank.choose({ascend::field::chip, 0, 5, 9}), 5);
}

TEST(CaseDomain, SizeClassBoundsMatchTheirDocumentedLimits) {
  EXPECT_EQ(bounds_of(SizeClass::tiny).max_dp, 4);
  EXPECT_EQ(bounds_of(SizeClass::tiny).max_tokens, 16);
  EXPECT_EQ(bounds_of(SizeClass::small).max_tokens, 64);
  EXPECT_EQ(bounds_of(SizeClass::production).max_dp, 64);
  EXPECT_EQ(bounds_of(SizeClass::production).max_tokens, 65536);
  EXPECT_TRUE(bounds_of(SizeClass::production).production_scale);
}

}  // namespace
}  // namespace r3
