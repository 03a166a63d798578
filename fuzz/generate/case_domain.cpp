#include "fuzz/generate/case_domain.hpp"

#include <algorithm>
#include <string>

#include "fuzz/generate/engine_draw.hpp"
#include "fuzz/generate/seeded_source.hpp"
#include "reference/layout.hpp"

namespace r3 {

void Source::increasing_list(const Choice& entries, int fresh_count, int, SeededList, std::vector<int64_t>& out) {
  const int64_t room = entries.hi - entries.lo + 1;
  const int64_t count = choose({entries.field, 0, 1, std::min<int64_t>(fresh_count, room)});
  out.clear();
  int64_t next = entries.lo;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t value = choose({entries.field, static_cast<size_t>(i) + 1, next, entries.hi - (count - 1 - i)});
    out.push_back(value);
    next = value + 1;
  }
}

std::span<const FieldInfo> case_fields() {
  static constexpr std::array<FieldInfo, kGenericFieldCount> kFields = {{
      {Field::tp, "tp", CasePart::topology, false, 1},
      {Field::dp, "dp", CasePart::topology, false, 1},
      {Field::ep, "ep", CasePart::topology},
      {Field::sp, "sp", CasePart::topology},
      {Field::layers, "layers", CasePart::model, false, 1},
      {Field::top_k, "top_k", CasePart::model, false, 1},
      {Field::experts, "experts", CasePart::model, false, 1},
      {Field::layer, "layer", CasePart::model},
      {Field::max_num_tokens, "max_num_tokens", CasePart::max_num_tokens, false, 1},
      {Field::token_shape, "token_shape", CasePart::tokens},
      {Field::token_holder, "token_holder", CasePart::tokens},
      {Field::tokens, "tokens", CasePart::tokens, true},
      {Field::padding, "padding", CasePart::padding},
      {Field::default_capture_sizes, "default_capture_sizes", CasePart::padding},
      {Field::capture_sizes, "capture_sizes", CasePart::padding, false, 1},
      {Field::path, "path", CasePart::path},
      {Field::monolithic, "monolithic", CasePart::path},
      {Field::microbatches, "microbatches", CasePart::calls, false, 1},
      {Field::chunked, "chunked", CasePart::calls},
      {Field::dp_chunk, "dp_chunk", CasePart::calls, false, 1},
      {Field::metadata, "metadata", CasePart::metadata},
      {Field::metadata_kind, "metadata_kind", CasePart::metadata},
      {Field::metadata_edit, "metadata_edit", CasePart::metadata},
      {Field::idle_dummy, "idle_dummy", CasePart::idle_dummy},
      {Field::engine, "engine", CasePart::topology},
  }};
  return kFields;
}

std::vector<FieldInfo> fields_of(Engine engine) {
  std::vector<FieldInfo> fields(case_fields().begin(), case_fields().end());
  if (const EngineDraw* part = engine_draw(engine)) {
    const std::span<const FieldInfo> own = part->own_fields();
    fields.insert(fields.end(), own.begin(), own.end());
  }
  return fields;
}

const FieldInfo* field_info(Field field, Engine engine) {
  if (!is_own(field)) return &case_fields()[static_cast<size_t>(field)];
  const EngineDraw* part = engine_draw(engine);
  if (!part) return nullptr;
  for (const FieldInfo& f : part->own_fields())
    if (f.field == field) return &f;
  return nullptr;
}

namespace {

// The names of the own slots, for one an engine does not use.
constexpr std::array<std::string_view, kOwnFieldCount> kOwnSlotNames = {
    "own_0", "own_1", "own_2",  "own_3",  "own_4",  "own_5",  "own_6",  "own_7",
    "own_8", "own_9", "own_10", "own_11", "own_12", "own_13", "own_14", "own_15"};

}  // namespace

std::string_view to_string(Field field, Engine engine) {
  if (const FieldInfo* f = field_info(field, engine)) return f->name;
  return kOwnSlotNames[static_cast<size_t>(own_index(field))];
}

namespace {

// The engines `profile` covers that can be drawn, in registry order.
std::vector<Engine> covered_drawable(Profile profile) {
  std::vector<Engine> engines;
  for (Engine e : all_engines()) {
    if (covers(profile, e) && engine_draw(e)) engines.push_back(e);
  }
  return engines;
}

}  // namespace

std::optional<Engine> fixed_engine(const CaseDomain& domain) {
  if (!domain.profile.is_any()) return engine_of(domain.profile);
  return domain.engine;
}

std::vector<Engine> drawn_engines(const CaseDomain& domain) {
  if (std::optional<Engine> engine = fixed_engine(domain)) return {*engine};
  return covered_drawable(domain.profile);
}

Status check_drawable(const CaseDomain& domain) {
  if (std::optional<Engine> engine = fixed_engine(domain)) {
    if (engine_draw(*engine)) return ok_status();
    return Error{"engine " + std::string(engine->name()) + ": has no draw part, so no case of it can be drawn"};
  }
  if (covered_drawable(domain.profile).empty())
    return Error{"profile " + std::string(domain.profile.name()) + ": covers no engine with a draw part"};
  return ok_status();
}

std::optional<int64_t> recorded_choice(const Case& c, Field field, size_t index) {
  switch (field) {
    case Field::engine: return static_cast<int64_t>(c.engine.index());
    case Field::tp: return c.topology.tp;
    case Field::dp: return c.topology.dp;
    case Field::ep: return c.topology.ep;
    case Field::sp: return c.topology.sp;
    case Field::layers: return c.model.layers;
    case Field::top_k: return c.model.top_k;
    case Field::experts: return c.model.experts;
    case Field::layer: return c.layer;
    case Field::max_num_tokens: return c.max_num_tokens;
    case Field::tokens:  // a rank the case lacks takes the last rank's count
      if (c.tokens.empty()) return std::nullopt;
      return c.tokens[std::min(index, c.tokens.size() - 1)];
    case Field::padding: return static_cast<int64_t>(c.padding.mode);
    case Field::path: return c.path == Path::local || c.path == Path::sp_shard;
    case Field::monolithic: return c.monolithic;
    case Field::microbatches: return c.microbatches;
    case Field::chunked: return c.dp_chunk.has_value();
    case Field::dp_chunk: return c.dp_chunk;
    case Field::metadata: return c.metadata.has_value();
    case Field::idle_dummy: return c.idle_dummy;
    case Field::token_shape:
    case Field::token_holder:
    case Field::capture_sizes:  // a list: replay_source.cpp replays it whole
    case Field::metadata_kind:
    case Field::metadata_edit: return std::nullopt;
    default: break;  // the engine's own fields, and the hints it records (default_capture_sizes)
  }
  const EngineDraw* part = engine_draw(c.engine);
  return part ? part->recorded_choice(c, field, index) : std::nullopt;
}

std::vector<int64_t> recorded_list(const Case& c, Field field) {
  if (field == Field::capture_sizes) return c.padding.cudagraph_sizes;
  const EngineDraw* part = engine_draw(c.engine);
  return part ? part->recorded_list(c, field) : std::vector<int64_t>{};
}

// In SizeClass order.
constexpr std::array<std::string_view, 3> kSizeClassNames = {"tiny", "small", "production"};

std::string_view to_string(SizeClass size) { return kSizeClassNames[static_cast<size_t>(size)]; }

Result<SizeClass> parse_size_class(std::string_view text) {
  for (size_t i = 0; i < kSizeClassNames.size(); ++i) {
    if (text == kSizeClassNames[i]) return static_cast<SizeClass>(i);
  }
  return Error{"size: \"" + std::string(text) + "\" is not one of tiny, small, production"};
}

bool can_microbatch(const Case& c) { return c.topology.dp > 1 && c.padding.mode == PaddingMode::dp_max; }

int64_t lowest_value(Field field, Engine engine) {
  const FieldInfo* f = field_info(field, engine);
  return f ? f->lowest : 0;
}

int64_t smallest_dp_chunk(const Case& c, int64_t max_chunks) {
  return std::max<int64_t>(1, ceil_div(most_rows_to_chunk(c), max_chunks));
}

namespace {

// The engine of the next case: the domain's, else one of drawn_engines() chosen first, the first
// of them 65 times in 100 and otherwise one of the others (no further draw when there is one
// other: with the built-in engines the choice is r.chance(35), sglang, else vllm).
// Asked for every drawn case, so it walks the registry in place rather than listing the engines.
template <class S>
Engine draw_engine(S& source, const CaseDomain& domain) {
  if (std::optional<Engine> engine = fixed_engine(domain)) return *engine;
  auto drawable = [&](size_t i) { return covers(domain.profile, Engine::at(i)) && engine_draw(Engine::at(i)); };
  int64_t count = 0;
  for (size_t i = 0; i < engine_count(); ++i) count += drawable(i);
  int64_t chosen = 0;
  if (count >= 2) {
    const int64_t others = count - 1;
    chosen = source.choose({Field::engine, 0, 0, others}, [others](Rng& r) -> int64_t {
      if (!r.chance(35)) return 0;
      return others == 1 ? 1 : r.range(1, others);
    });
  }
  for (size_t i = 0; i < engine_count(); ++i)
    if (drawable(i) && chosen-- == 0) return Engine::at(i);
  return Engine{};  // no drawable engine: draw_case names it
}

template <class S>
Case draw_case(S& source, const CaseDomain& domain) {
  const Engine engine = draw_engine(source, domain);
  const EngineDraw* part = engine_draw(engine);
  source.drawing(engine);
  if (!part) {
    const std::string why = "engine " + std::string(engine.name()) + " has no draw part (check_drawable says so)";
    check_failed(__FILE__, __LINE__, "engine_draw(engine)", why.c_str());
  }
  return part->draw(source, domain);
}

}  // namespace

Case draw(Source& source, const CaseDomain& domain) { return draw_case(source, domain); }
Case draw(SeededSource& source, const CaseDomain& domain) { return draw_case(source, domain); }

}  // namespace r3
