// What an engine's request lifecycle is, as r3fuzz models it: how the rows its capture writes in
// each forward become the routed_experts of each finished request. Each engine implements this
// in its folder (reference/engines/NAME/lifecycle*.cpp) and hands it out from
// EngineModel::lifecycle(); the generic code (the trace judge, the tools) never names an engine.
//
// A lifecycle model runs a whole trace for one version of the engine, with some of its patches
// applied. The rows each forward's capture delivers are an input (StepDelivery): the identity
// when the per-step capture is right, something else when the version's per-step policy
// misplaces rows, so a per-step bug shows in the requests it corrupts.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/trace/route.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

struct Step;  // reference/layout.hpp

// What one forward's capture hands the lifecycle, per DP rank: for batch row j of the rank
// (StepView::rows[dp][j]), where the value captured for it came from. A correct capture gives
// {route, req, pos, version} of the row itself (identity_delivery).
struct StepDelivery {
  std::vector<std::vector<RouteRef>> rows;  // [dp][row]
  std::optional<std::string> raised;        // the capture raised: the engine's forward fails
  // Rows of each DP rank's forward, its padding included, from the step the policy ran on
  // (LifecycleModel::forward_rows); empty when no step was derived or the engine does not say.
  std::vector<int64_t> forward_rows;
};

StepDelivery identity_delivery(const StepView& step);

// What the engine returns for one request.
struct RequestRoutes {
  enum class Status : uint8_t {
    returned,   // rows (possibly empty)
    none,       // finished without routed_experts (no field, an empty answer)
    not_finished,  // the engine never finished it (it crashed first, or the trace ended)
  };
  Status status = Status::not_finished;
  std::vector<RouteRef> rows;  // the rows returned, in order
};

struct LifecycleOutcome {
  std::vector<RequestRoutes> requests;  // one per trace request
  // The engine crashed (an assertion, an exception out of the scheduler): at which step, why.
  std::optional<int> crash_step;
  std::string crash;
};

// A version of the engine's lifecycle: a trace implementation ("sglang", "sglang-fixed").
struct LifecycleVersion {
  std::string_view name;         // the implementation name
  std::string_view policy;       // the per-step policy model it captures with (EngineModel::policies)
  std::string_view summary;      // one line: the version and commit it models
  std::string_view profile;      // the profile whose traces it runs
  bool released = true;          // false for the fixed model
};

// A change between a version and the engine's fixed model, by name, with what it changes and
// the source of the defect it repairs. A finding's root cause is the smallest set that repairs it.
struct LifecyclePatch {
  std::string_view name;  // "hicache-rows"
  std::string_view what;  // one line, citing file, function and commit
};

class LifecycleModel {
 public:
  virtual ~LifecycleModel() = default;

  virtual std::span<const LifecycleVersion> versions() const = 0;
  virtual std::span<const LifecyclePatch> patches() const = 0;
  // The patches `version` lacks (none for the fixed model), as indices into patches().
  virtual std::vector<int> missing_patches(std::string_view version) const = 0;

  // The engine's own rules for a trace beyond build_timeline()'s: its knobs (names and values),
  // page alignment of hits, spec shapes. Errors name the key or the step.
  virtual Status check(const Trace& t, const Timeline& timeline) const = 0;
  // Why the engine version of `profile` never runs `t` (a start-up refusal, a schedule its
  // scheduler never makes), naming the rule and its source; ok when it runs it.
  virtual Status check_profile(const Trace& t, const Timeline& timeline, Profile profile) const = 0;

  // The one-step case of step `step`, for the per-step policy (nullopt: the step is not judged
  // per step, and its delivery is the identity).
  virtual std::optional<Case> step_case(const Trace& t, const Timeline& timeline, int step) const = 0;
  // Every step's case, as the judge asks for them: an engine whose step case depends on earlier
  // steps (SGLang's last replayed graph bucket) computes them in one pass, so judging stays
  // linear in the trace's length. The default asks step_case() for each.
  virtual std::vector<std::optional<Case>> step_cases(const Trace& t, const Timeline& timeline) const;
  // Rows of each DP rank's forward, padding included, in `step`, derived from one of the engine's
  // step cases: the judge passes them on in the step's delivery, so that run() need not derive the
  // step again. The default: empty (the engine does not use them).
  virtual std::vector<int64_t> forward_rows(const Step& step) const {
    (void)step;
    return {};
  }

  // Runs the trace under `version` with the patches `applied` (indices into patches()) on top.
  // `delivery` holds one entry per step.
  virtual LifecycleOutcome run(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                               std::string_view version, std::span<const int> applied) const = 0;
};

// The lifecycle model of `engine`, or null when the engine has none yet.
const LifecycleModel* lifecycle_of(Engine engine);
// The version named `name` among every engine's, and its engine.
struct FoundVersion {
  Engine engine;
  const LifecycleModel* model = nullptr;
  const LifecycleVersion* version = nullptr;
};
std::optional<FoundVersion> find_lifecycle_version(std::string_view name);

// Every rule a trace obeys: build_timeline()'s, then its engine's (LifecycleModel::check); an
// engine without a lifecycle model is an error naming it. The codecs run this on every trace read.
Result<Timeline> validate_trace(const Trace& t);

}  // namespace r3
