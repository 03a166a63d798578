#include "reference/trace/lifecycle.hpp"

#include "reference/engine_model.hpp"

namespace r3 {

StepDelivery identity_delivery(const StepView& step) {
  StepDelivery out;
  out.rows.resize(step.rows.size());
  for (size_t d = 0; d < step.rows.size(); ++d) {
    out.rows[d].reserve(step.rows[d].size());
    for (const BatchRow& row : step.rows[d]) {
      // A rejected draft's row is the route of a token the trace never names: it is a draft row.
      const auto kind = row.kept || row.lagging ? RouteRef::Kind::route : RouteRef::Kind::draft;
      out.rows[d].push_back(RouteRef{kind, row.req, row.pos, step.version});
    }
  }
  return out;
}

std::vector<std::optional<Case>> LifecycleModel::step_cases(const Trace& t, const Timeline& timeline) const {
  std::vector<std::optional<Case>> out;
  out.reserve(timeline.steps.size());
  for (size_t n = 0; n < timeline.steps.size(); ++n) out.push_back(step_case(t, timeline, static_cast<int>(n)));
  return out;
}

const LifecycleModel* lifecycle_of(Engine engine) { return engine.model().lifecycle(); }

std::optional<FoundVersion> find_lifecycle_version(std::string_view name) {
  for (const Engine engine : all_engines()) {
    const LifecycleModel* model = lifecycle_of(engine);
    if (model == nullptr) continue;
    for (const LifecycleVersion& version : model->versions())
      if (version.name == name) return FoundVersion{engine, model, &version};
  }
  return std::nullopt;
}

Result<Timeline> validate_trace(const Trace& t) {
  const LifecycleModel* model = lifecycle_of(t.engine);
  if (model == nullptr)
    return Error{"engine: " + std::string(to_string(t.engine)) + " has no lifecycle model, so its traces cannot be judged"};
  R3_TRY(auto timeline, build_timeline(t));
  R3_TRY_STATUS(check_copies(t));
  R3_TRY_STATUS(model->check(t, timeline));
  return timeline;
}

}  // namespace r3
