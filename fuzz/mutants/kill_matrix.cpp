#include "fuzz/mutants/kill_matrix.hpp"

#include <algorithm>
#include <chrono>

#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/exhaust/comparison.hpp"
#include "fuzz/exhaust/engine_exhaust.hpp"
#include "fuzz/exhaust/search.hpp"
#include "fuzz/generate/generator.hpp"
#include "fuzz/shrink/shrink.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The profile a carrier of `engine` is hunted, shrunk and searched under: --profile when it
// covers the engine, else the engine's first (`r3fuzz mutants` skips a carrier outside
// --profile; a caller that measures one anyway gets its engine's default profile).
Profile carrier_profile(Engine engine, Profile p) { return covers(p, engine) ? p : Profile::of(engine, 0); }

// Each carrier is hunted on its own engine's cases (carrier_engine, fuzz/mutants/carrier.hpp):
// the default engine's draw exactly the cases they drew before other engines existed, another
// engine's the generator's cases of that engine.
GeneratorOptions generator_options(const Mutant& m, Profile profile) {
  const Engine engine = carrier_engine(*m.mutant);
  GeneratorOptions g;
  g.profile = carrier_profile(engine, profile);
  g.engine = engine;
  g.wide_experts = true;  // narrow-int16 needs E > 32767
  if (m.concrete) g.sizes = {SizeClass::tiny, SizeClass::small};
  return g;
}

SeedHunt hunt(const Mutant& m, const CaseCheck& check, uint64_t seed, const MutantsOptions& options,
              std::optional<Case>& detected, std::string& difference) {
  SeedHunt h{seed, false, 0, 0};
  const int64_t max_cases = options.max_cases;
  const GeneratorOptions g = generator_options(m, options.profile);
  const auto start = Clock::now();
  for (int64_t i = 0; i < max_cases; ++i) {
    const GeneratedCase gc = generate_case(seed, static_cast<uint64_t>(i), g);
    if (!m.mutant->serves(gc.c.engine)) continue;  // a case of the other engine tells nothing
    if (m.concrete && !fits_concrete(gc.c)) continue;
    auto step = derive_step(gc.c);
    if (!step.ok()) continue;
    ++h.cases;
    if (auto diff = check(gc.c, *step)) {
      h.killed = true;
      if (!detected) {
        detected = gc.c;
        difference = *diff;
      }
      break;
    }
  }
  h.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return h;
}

// The shrinker keeps a failing judgement's signature; a mutant "fails" on a case when its
// outcome differs from the base's there. Its judgement is reported, or the base's when the
// mutant itself passes (a fault that hides a base failure).
CaseJudge difference_judge(const StepJudge& mutant, const StepJudge& base) {
  return [mutant, base](const Case& c) -> Result<Judgement> {
    R3_TRY_STATUS(validate(c));
    R3_TRY(Step step, derive_step(c));
    R3_TRY(Judgement jm, mutant(c, step));
    R3_TRY(Judgement jb, base(c, step));
    if (!outcome_difference(jm, jb)) {
      Judgement same;
      same.impl = jm.impl;
      return same;
    }
    if (jm.failed()) return jm;
    jb.impl = jm.impl + " (passes where " + jb.impl + " fails)";
    return jb;
  };
}

std::string exhaust_statement(const ExhaustBounds& b, const ExhaustReport& r) {
  if (!r.counterexample) {
    return "exhaust " + describe(b) + ": no difference within bounds: " + std::to_string(r.cases) + " cases checked";
  }
  return "exhaust " + describe(b) + ": difference at case " + std::to_string(r.counterexample->position) + ": " +
         r.counterexample->detail;
}

}  // namespace

std::string_view to_string(MutantStatus s) {
  switch (s) {
    case MutantStatus::killed: return "killed";
    case MutantStatus::equivalent: return "equivalent";
    case MutantStatus::survived: return "survived";
    case MutantStatus::unavailable: return "unavailable";
  }
  return "?";
}

int MutantResult::kills() const {
  return static_cast<int>(std::count_if(hunts.begin(), hunts.end(), [](const SeedHunt& h) { return h.killed; }));
}

MutantResult unavailable_mutant(std::string_view carrier, Fault fault, std::string reason) {
  MutantResult r;
  r.fault = std::string(to_string(fault));
  r.carrier = std::string(carrier);
  r.status = MutantStatus::unavailable;
  r.note = std::move(reason);
  return r;
}

MutantResult measure_mutant(const Mutant& m, const MutantsOptions& options) {
  MutantResult r;
  r.fault = std::string(to_string(m.fault));
  r.carrier = m.carrier;
  r.mutant = m.mutant->name();
  const Mode mode = m.concrete ? Mode::concrete : Mode::symbolic;
  const StepJudge mutant = judge_implementation(*m.mutant, mode);
  const StepJudge base = judge_implementation(*m.base, mode);
  const CaseCheck check = differs_between(mutant, base);
  for (int s = 0; s < options.seeds; ++s) {
    r.hunts.push_back(hunt(m, check, options.first_seed + static_cast<uint64_t>(s), options, r.detected,
                           r.difference));
  }
  if (r.detected) {
    r.status = MutantStatus::killed;
    const CaseJudge judge = difference_judge(mutant, base);
    Case shown = *r.detected;
    if (options.shrink) {
      ShrinkOptions so;
      so.max_seconds = 10;
      so.profile = carrier_profile(carrier_engine(*m.mutant), options.profile);
      if (auto shrunk = shrink_case(*r.detected, judge, so); shrunk.ok()) {
        r.shrunk = shrunk->minimal;
        shown = shrunk->minimal;
      }
    }
    if (auto j = judge(shown); j.ok()) r.signature = signature_of(*j, shown).text();
    auto step = derive_step(shown);
    if (step.ok())
      if (auto diff = check(shown, *step)) r.difference = *diff;
    return r;
  }
  // The equivalence search runs over the carrier's own engine's space (fuzz/exhaust/case_space.hpp);
  // an engine without one cannot tell an equivalent mutant from a surviving one.
  const Engine engine = carrier_engine(*m.mutant);
  const EngineExhaust* space = engine_exhaust(engine);
  if (!space) {
    r.status = MutantStatus::unavailable;
    r.note = "no seed killed it, and engine " + std::string(engine.name()) + " has no exhaustive space to decide equivalence";
    return r;
  }
  ExhaustBounds bounds = options.equivalence_bounds.value_or(space->equivalence_bounds());
  bounds.profile = carrier_profile(engine, options.profile);
  bounds.engine = engine;
  const ExhaustReport report = exhaust_search(bounds, check, {options.jobs, {}});
  if (report.internal_error) {  // a search that stopped proves no equivalence
    r.status = MutantStatus::unavailable;
    r.note = "no seed killed it, and the equivalence search stopped: internal error (" + *report.internal_error + ")";
    return r;
  }
  r.note = exhaust_statement(bounds, report);
  r.status = report.counterexample ? MutantStatus::survived : MutantStatus::equivalent;
  if (report.counterexample) {
    r.detected = report.counterexample->c;
    r.difference = report.counterexample->detail;
  }
  return r;
}

std::optional<KillStats> kill_stats(const MutantResult& r) {
  std::vector<double> cases, seconds;
  for (const SeedHunt& h : r.hunts) {
    if (!h.killed) continue;
    cases.push_back(static_cast<double>(h.cases));
    seconds.push_back(h.seconds);
  }
  if (cases.empty()) return std::nullopt;
  return KillStats{median(cases), *std::max_element(cases.begin(), cases.end()), median(seconds),
                   *std::max_element(seconds.begin(), seconds.end())};
}

}  // namespace r3
