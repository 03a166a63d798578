// Seeds from production: deployment descriptions (model shape + parallel configuration +
// traffic profile, format "r3fuzz-deployment/1", docs/FUZZING.md "Seeding from production") and metadata logs (JSON
// lines of num_tokens_across_dp and local_sizes per step, as an engine hook dumps them)
// become validated corpus cases, deduplicated by their canonical binary form. What a deployment
// holds beyond its name and note, and the cases it seeds, are its engine's (engine_seed.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/engine_data.hpp"
#include "reference/profile.hpp"
#include "reference/error.hpp"

namespace r3 {

struct Deployment {
  std::string name;  // file-name stem of the cases it seeds
  std::string note;  // where the deployment comes from; copied into every case
  Engine engine;     // "engine" (absent: the default engine)
  // The engine's knobs and traffic, as its seed part (engine_seed.hpp) reads and uses them.
  EngineData fields;
};

Result<Deployment> deployment_from_json_text(std::string_view text);
Result<Deployment> read_deployment_file(const std::string& path);

// The profile a deployment seeds under when --profile is not given: its engine's default.
Profile default_profile_of(const Deployment& d);

// The base case of a deployment (tokens all zero, last layer); a default case for an engine
// without a seed part.
Case deployment_case(const Deployment& d);

// Traffic-profile cases: decode steps at every capture size in the batch range and its
// neighbours (sizes +-1 straddle the buckets), and prefill steps at each length (all ranks
// equal, and one rank one token short). Every case is validated before the first is visited (an
// invalid one is the error, and nothing is visited); they are then made and handed to `visit`
// one at a time, in order, until it returns an error, which is returned. Memory stays one case's
// worth whatever the traffic holds.
Status for_each_traffic_case(const Deployment& d, const std::function<Status(Case)>& visit);
// All of them at once: for small deployments (tests).
Result<std::vector<Case>> cases_from_traffic(const Deployment& d);
// How many for_each_traffic_case() visits, duplicates included, counted without making them; at
// most kMaxTrafficCases (fuzz/seed/traffic.hpp) for a deployment the readers accept.
int64_t count_traffic_cases(const Deployment& d);

// One case per log line, the logged metadata as the override, handed to `visit` as it is read
// (as for_each_traffic_case). Lines that do not parse or disagree with the deployment are
// reported as "line N: ..." in `errors`, never dropped silently (every line, for an engine
// whose deployments take no log: EngineSeed::log_refusal()).
Status for_each_log_case(const Deployment& d, std::string_view log, std::vector<std::string>& errors,
                         const std::function<Status(Case)>& visit);
// All of them at once: for small logs (tests).
std::vector<Case> cases_from_metadata_log(const Deployment& d, std::string_view log, std::vector<std::string>& errors);

// A seeded case as the profile's engine runs it (fit_to_profile), recording the profile. Logged
// metadata that agrees with the step is dropped as redundant; metadata that disagrees is a step no
// profile but any can run: an error naming the disagreement. A profile of another engine is an error.
Result<Case> seed_in_profile(Case c, Profile profile);

// The dedup key: the canonical binary encoding without note and expectation.
std::string canonical_key(const Case& c);
// Its 64-bit FNV-1a hash. Two cases with one hash get one file name, so `seed` deduplicates by
// the hash: it holds 8 bytes per case written, never the cases.
uint64_t canonical_hash(const Case& c);

// "<name>-<16 hex digits of canonical_hash()>.json".
std::string seed_file_name(const std::string& name, const Case& c);

}  // namespace r3
