// The fault-kill matrix: for each mutant (a fault in a carrier), how many generated cases and
// seconds the harness needs to tell it from the carrier without the fault, over several seeds;
// the first detecting case shrunk to a readable one; and, for a mutant no seed kills, whether
// bounded exhaustive search finds any case that tells them apart (equivalent when none).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/exhaust/bounds.hpp"
#include "fuzz/mutants/carrier.hpp"
#include "reference/case.hpp"

namespace r3 {

struct MutantsOptions {
  int seeds = 5;
  uint64_t first_seed = 1;       // seeds first_seed .. first_seed + seeds - 1
  int64_t max_cases = 20000;     // generated cases per seed before giving up
  bool shrink = true;
  // Bounds of the exhaustive search that decides equivalence for a mutant no seed kills: each
  // carrier's engine's own (EngineExhaust::equivalence_bounds, fuzz/exhaust/engine_exhaust.hpp),
  // or these for every engine (a test's smaller budget).
  std::optional<ExhaustBounds> equivalence_bounds = std::nullopt;
  int jobs = 1;
  // The mutants are hypothetical bugs in the fixed models and the GPU pipeline, so by default
  // they are hunted over the whole case space (profile any); --profile narrows the hunt, the
  // shrinking and the equivalence search to one engine's steps (a fault it cannot reach is
  // equivalent).
  Profile profile = Profile::any();
};

struct SeedHunt {
  uint64_t seed = 0;
  bool killed = false;
  int64_t cases = 0;     // cases judged up to and including the first detection (all, if none)
  double seconds = 0;    // wall time of the same
};

enum class MutantStatus { killed, equivalent, survived, unavailable };
std::string_view to_string(MutantStatus s);

struct MutantResult {
  std::string fault;
  std::string carrier;
  std::string mutant;  // the mutant implementation's name
  MutantStatus status = MutantStatus::unavailable;
  std::vector<SeedHunt> hunts;
  std::optional<Case> detected;   // first detecting case of the first killing seed
  std::optional<Case> shrunk;     // that case shrunk (when the shrinker ran)
  std::string signature;          // of the shrunk (else the detected) case's mutant judgement
  std::string difference;         // how mutant and base differ on it
  std::string note;               // why unavailable; the exhaust statement behind equivalent/survived
  int kills() const;
};

// Every number is deterministic for fixed options except the seconds.
MutantResult measure_mutant(const Mutant& m, const MutantsOptions& options);

// A carrier that cannot be built (the GPU pipeline not registered in this build) or that
// does not carry the fault, as an "unavailable" row naming the reason.
MutantResult unavailable_mutant(std::string_view carrier, Fault fault, std::string reason);

// Median and worst of the killing seeds' cases and seconds (nullopt when no seed killed).
struct KillStats {
  double median_cases = 0, worst_cases = 0, median_seconds = 0, worst_seconds = 0;
};
std::optional<KillStats> kill_stats(const MutantResult& r);

}  // namespace r3
