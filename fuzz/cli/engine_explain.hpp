// An engine's own explanation (`r3fuzz explain`): its case and step read in the engine's terms,
// in place of the layout report explain.hpp writes from the generic step (ranks, shards,
// padding, gathered segments, calls). An engine without this part is explained by that report
// alone. Each engine's part lives in fuzz/engines/NAME/explain.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "reference/engine.hpp"
#include "reference/layout.hpp"

namespace r3 {

struct Explanation;  // fuzz/cli/explain.hpp

class EngineExplain {
 public:
  virtual ~EngineExplain() = default;

  // The --json document of `e` (explanation_json() returns it as it is).
  virtual nlohmann::ordered_json json(const Explanation& e) const = 0;
  // The human report of `e`, bounded whatever the case (explanation_text() returns it as it is).
  virtual std::string text(const Explanation& e) const = 0;
  // What json() lists beyond check_json_size's rank entries, counted without building it: the
  // runs of rows every rank writes in every call (nullopt: json() lists neither runs nor copies)...
  virtual std::optional<int64_t> written_runs(const Step& s) const = 0;
  // ... and, once the policies are judged, the copies every policy publishes on every rank and call.
  virtual int64_t published_copies(const Explanation& e) const = 0;
};

// The explain part of `engine`; null when it has none (fuzz/engines/registry.cpp).
const EngineExplain* engine_explain(Engine engine);

}  // namespace r3
