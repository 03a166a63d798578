// What the case domain (case_domain.hpp) asks of an engine: to draw one case of it from a source,
// and to read back the choices its own fields recorded, so that a replaying source
// (replay_source.hpp) gives a case back. The generic draw picks the engine (case_domain.cpp,
// draw) and hands the rest to the engine's part, found through engine_draw(); each engine
// implements it in fuzz/engines/NAME/draw.cpp (docs/ENGINES.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fuzz/generate/case_domain.hpp"
#include "fuzz/generate/source.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"

namespace r3 {

class SeededSource;

class EngineDraw {
 public:
  virtual ~EngineDraw() = default;

  // A valid case of the engine inside domain.profile (which covers the engine), each choice
  // asked of the source in the engine's fixed order within what the choices before it allow.
  virtual Case draw(Source& source, const CaseDomain& domain) const = 0;
  // The same draw with the seeded source's calls resolved at compile time (campaigns draw every
  // case through it): the engine instantiates its draw for SeededSource too.
  virtual Case draw(SeededSource& source, const CaseDomain& domain) const = 0;

  // The engine's own fields (the slots Field::own_0 ... its draw asks for, in its draw order):
  // their names, the part of the case each belongs to, which have an entry per DP rank and the
  // least value of each. Generic code learns an own field's facts here, for the engine of the
  // case at hand (case_domain.hpp, field_info); each slot at most once.
  virtual std::span<const FieldInfo> own_fields() const { return {}; }

  // The choice the draw made for `field` (entry `index` of a per-rank field) to give `c` its
  // value, for a field case_domain.cpp's recorded_choice leaves to the engine (every field but
  // the case format's own); nullopt for one the engine does not draw or record.
  virtual std::optional<int64_t> recorded_choice(const Case& c, Field field, size_t index) const {
    (void)c;
    (void)field;
    (void)index;
    return std::nullopt;
  }
  // The list `c` recorded for one of the engine's own list fields, in the units the draw asked
  // for it; empty when it holds none.
  virtual std::vector<int64_t> recorded_list(const Case& c, Field field) const {
    (void)c;
    (void)field;
    return {};
  }
};

// The engine's draw part (fuzz/engines/registry.cpp); null for an engine without one.
const EngineDraw* engine_draw(Engine engine);

}  // namespace r3
