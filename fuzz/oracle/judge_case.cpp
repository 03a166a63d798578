#include "fuzz/oracle/judge_case.hpp"

#include "fuzz/oracle/judge.hpp"
#include "reference/engine_model.hpp"
#include "reference/provenance.hpp"

namespace r3 {

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::concrete: return "concrete";
    case Mode::symbolic: return "symbolic";
    case Mode::mixed: return "mixed";
  }
  return "?";
}

std::string_view to_string(JudgeMode mode) { return mode == JudgeMode::concrete ? "concrete" : "symbolic"; }

Result<Mode> parse_mode(std::string_view text) {
  for (Mode m : {Mode::concrete, Mode::symbolic, Mode::mixed})
    if (text == to_string(m)) return m;
  return Error{"\"" + std::string(text) + "\" is not one of concrete, symbolic, mixed"};
}

bool fits_concrete(const Case& c) {
  return c.engine.model().small_enough_to_materialise(c) &&
         int64_t{c.topology.dp} * c.topology.tp <= kConcreteMaxRanks && provenance_fits(c);
}

std::optional<JudgeMode> choose_judge_mode(Mode mode, const Implementation& impl, const Case& c) {
  if (!impl.serves(c.engine)) return std::nullopt;
  const bool symbolic = impl.policy() != nullptr;
  const bool concrete = fits_concrete(c);
  switch (mode) {
    case Mode::concrete: return concrete ? std::optional(JudgeMode::concrete) : std::nullopt;
    case Mode::symbolic:
      if (symbolic) return JudgeMode::symbolic;
      return concrete ? std::optional(JudgeMode::concrete) : std::nullopt;
    case Mode::mixed:
      if (concrete) return JudgeMode::concrete;
      return symbolic ? std::optional(JudgeMode::symbolic) : std::nullopt;
  }
  return std::nullopt;
}

// The size rule the error below has always named: the default engine's (its model's
// small_enough_to_materialise), whatever the case's engine; kept so the text stays the same.
constexpr int64_t kMessageMaxTokens = 64;

Result<JudgeMode> judge_mode_for(const Implementation& impl, const Case& c, Mode mode) {
  if (std::optional<JudgeMode> how = choose_judge_mode(mode, impl, c)) return *how;
  if (!impl.serves(c.engine)) {
    return Error{impl.name() + " cannot be judged on this case: it models another engine, and the case is " +
                 std::string(to_string(c.engine)) + "'s (\"engine\")"};
  }
  return Error{impl.name() + " cannot be judged on this case: it has no policy to judge symbolically and the case "
                             "is too large to run concretely (needs M <= " +
               std::to_string(kMessageMaxTokens) + " and dp*tp <= " + std::to_string(kConcreteMaxRanks) +
               ") in mode " + std::string(to_string(mode))};
}

Judgement judge_case(const Implementation& impl, const Case& c, const Step& step, JudgeMode mode,
                     RankDetails details) {
  if (mode == JudgeMode::symbolic) {
    R3_CHECK(impl.policy() != nullptr, "symbolic judging needs a policy");
    return judge_symbolic(c, step, *impl.policy(), impl.name(), details);
  }
  Result<ConcreteOutcome> outcome = impl.run_concrete(c, step);
  if (!outcome.ok()) {
    Judgement j;
    j.impl = impl.name();
    j.verdict = Verdict::adapter_error;
    j.severity = Severity::failure;
    j.branch = "none";
    j.detail = j.impl + " failed to run: " + outcome.error().message;
    return j;
  }
  return judge_concrete(c, step, *outcome, impl.name());
}

Result<Judgement> judge_by_rule(const Implementation& impl, const Case& c, const Step& step, Mode mode) {
  R3_TRY(JudgeMode how, judge_mode_for(impl, c, mode));
  return judge_case(impl, c, step, how);
}

void judge_case_into(Judgement& out, const Implementation& impl, const Case& c, const Step& step, JudgeMode mode,
                     RankDetails details) {
  if (mode == JudgeMode::symbolic) {
    R3_CHECK(impl.policy() != nullptr, "symbolic judging needs a policy");
    return judge_symbolic_into(out, c, step, *impl.policy(), impl.name(), details);
  }
  out = judge_case(impl, c, step, mode, details);
}

std::string branch_taken(const Judgement& j) {
  if (!j.branch.empty()) return j.branch;
  if (j.classes.empty() || j.classes.front().branches.empty()) return "none";
  for (std::string_view b : j.classes.front().branches)
    if (b == branch::error) return std::string(branch::error);
  return std::string(j.classes.front().branches.back());
}

}  // namespace r3
