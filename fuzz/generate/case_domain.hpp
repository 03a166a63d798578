// The case domain: every rule of a valid case an engine can reach, in one place. draw() builds
// a case from a Source (source.hpp), one field at a time in a fixed order: the engine where the
// domain covers several, then the engine's own draw (engine_draw.hpp; for the case format's own
// fields: topology, model and layer, M, tokens, padding, path and monolithic, capture calls,
// metadata and idle dummies), asking each choice only within the range the fields before it
// leave valid, then resolving the active profile (reference/profile.hpp). Whatever the source
// answers, the case validates (reference/validate.hpp stays the independent check) and lies
// inside the profile.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "fuzz/generate/source.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/limits.hpp"
#include "reference/profile.hpp"

namespace r3 {

// tiny: D <= 4, M <= 16 (bugs read at a glance); small: M <= 64, every value encodable
// (concrete mode); production: M up to 65536, D up to 64 (symbolic mode).
enum class SizeClass { tiny, small, production };
std::string_view to_string(SizeClass size);
Result<SizeClass> parse_size_class(std::string_view text);

// The part of the case space a producer draws from: sizes and switches, never rules.
struct DomainBounds {
  int min_dp = 1;
  int max_dp = 4;
  int max_ranks = 16;  // D*T, so concrete runs stay cheap
  int max_tp = 4;
  int64_t max_tokens = 16;  // M
  int max_layers = 4;
  int max_top_k = 2;
  int max_experts = limits::kMaxExpertsInInt16;  // above it: ids int16 storage cannot hold
  int64_t max_chunks = 16;  // DP chunks per step
  int max_microbatches = 4;
  int max_custom_capture_sizes = 7;  // entries of a custom CUDA-graph capture list
  int max_capture_sizes = limits::kMaxCudagraphSizes;  // entries of any list (vLLM's default has 51)
  int64_t max_capture_size = limits::kMaxRows;
  int64_t max_dp_chunk = limits::kMaxRows;
  bool cudagraph = true;      // CUDA-graph padding
  bool microbatching = true;  // U > 1 (docs/layout-contract.md 9.1)
  bool dp_chunking = true;    // DP chunks (docs/layout-contract.md 9.2)
  bool metadata_overrides = false;  // inconsistent metadata (corner case 8), under profile any only
  bool require_sp = false;    // only SP topologies (dp > 1, tp > 1, ep, sp)
  bool production_scale = false;  // seeded draws reach M above 16384 and log-spread D
};

// The bounds of a generator size class (inline: the generator builds one per case).
constexpr DomainBounds bounds_of(SizeClass size) {
  switch (size) {
    case SizeClass::tiny: return {};
    case SizeClass::small: return {.max_dp = 8, .max_tp = 8, .max_tokens = 64, .max_top_k = 4, .max_chunks = 64};
    case SizeClass::production:
      return {.max_dp = 64, .max_ranks = 64 * 8, .max_tp = 8, .max_tokens = 65536, .max_layers = 128, .max_top_k = 8,
              .production_scale = true};
  }
  return {};
}

struct CaseDomain {
  Profile profile = kDefaultProfile;  // every case lies inside it
  DomainBounds bounds;
  // The engine of every case, where the profile covers more than one (any); nullopt: each case
  // chooses (Field::engine). A campaign whose implementations serve one engine names it.
  std::optional<Engine> engine = std::nullopt;
};

// The engine a domain's next case belongs to without a choice, or nullopt when it chooses.
std::optional<Engine> fixed_engine(const CaseDomain& domain);

// The engines a domain's cases belong to: the one it fixes, else every engine its profile covers
// that has a draw part (engine_draw.hpp), in registry order. Where there are several, draw()
// chooses the engine first (Field::engine): the first of them in 65 cases of 100 under the seeded
// source, else one of the others (with the two built-in engines: vllm, else sglang with
// r.chance(35), the draw campaigns have always made).
std::vector<Engine> drawn_engines(const CaseDomain& domain);
// Why draw() cannot draw the domain's cases (an engine without a draw part, naming it); ok when
// it can. draw() itself stops on an internal check there.
Status check_drawable(const CaseDomain& domain);

// The parts of a case, each a group of fields a producer changes together (a mutation
// redraws one part, a crossover takes each part from one parent).
enum class CasePart : uint8_t { topology, model, max_num_tokens, tokens, padding, path, calls, metadata, idle_dummy };
inline constexpr int kCasePartCount = static_cast<int>(CasePart::idle_dummy) + 1;

// What generic code knows of a field: its name, its part, whether it has an entry per DP rank
// (tokens, and an engine's own per-rank counts) and the smallest value it takes in any domain (1
// for sizes and counts of calls, 0 for token counts, the layer and the flags): what the shrink
// passes reduce toward, and for a list field its entries' least.
struct FieldInfo {
  Field field;
  std::string_view name;
  CasePart part;
  bool per_rank = false;
  int64_t lowest = 0;
};
// The generic fields (Field::tp up to Field::engine), in the order draw() asks for them. An
// engine's own fields are its to describe (EngineDraw::own_fields): fields_of() joins them.
std::span<const FieldInfo> case_fields();
// The fields of a case of `engine`: the generic ones, then the engine's own in its draw order.
std::vector<FieldInfo> fields_of(Engine engine);
// What `field` is in a case of `engine`; null for an own slot the engine does not use.
const FieldInfo* field_info(Field field, Engine engine);
// The field's name in a case of `engine` ("own_K" for an own slot the engine does not use).
std::string_view to_string(Field field, Engine engine);

// The choice for `field` (entry `index` of a list) that draw() would have made to produce `c`'s
// value, for a source that replays cases (replay_source.hpp). Empty for the token hints (a
// replayed case gives each rank its own count), for the capture size list (replayed whole) and
// for the metadata's inner choices, which a case does not record. The engine's own fields (those
// the case format does not hold) are read back by the engine of `c` (EngineDraw::recorded_choice);
// the engine choice records the engine's index in the registry, its place among drawn_engines()
// while every engine before it can be drawn.
std::optional<int64_t> recorded_choice(const Case& c, Field field, size_t index);
// The list `c` recorded for a list field, as draw() asks for it: the capture sizes, or one of the
// engine's own lists (EngineDraw::recorded_list); empty when it holds none.
std::vector<int64_t> recorded_list(const Case& c, Field field);

// A valid case inside domain.profile, built from the source's choices.
Case draw(Source& source, const CaseDomain& domain);
// The same draw with the seeded source's calls resolved at compile time: campaigns generate
// every case through it, so it must cost no more than a hand-written generator.
class SeededSource;
Case draw(SeededSource& source, const CaseDomain& domain);

// The case format's micro-batching rule: more than one micro-batch needs DP and dp_max padding
// (every rank runs P = max real tokens). validate() checks it on its own; producers ask here.
bool can_microbatch(const Case& c);

// The smallest value `field` takes in any domain of `engine`'s cases (FieldInfo::lowest; 0 for
// an own slot the engine does not use).
int64_t lowest_value(Field field, Engine engine);

// The DP-chunk bound: the smallest chunk size C that splits the step into at most
// `max_chunks` chunks (reference/layout.hpp, most_rows_to_chunk: the rows a rank chunks).
int64_t smallest_dp_chunk(const Case& c, int64_t max_chunks);

}  // namespace r3
