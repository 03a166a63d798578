// r3fuzz seed --serving-trace LOG.jsonl --out DIR [--profile P] [--variants N]: a production
// serving log (fuzz/seed/serving_log.hpp) as traces of the profile's engine, one per variant:
// the log's requests, their shared prefixes and arrivals, scheduled by the engine's scheduler
// model on a shape (topology, config, knobs) drawn from seed 1, 2, ... N.
#pragma once

#include <string>

#include "fuzz/cli/commands.hpp"
#include "reference/engine.hpp"

namespace r3 {

struct ServingSeedArgs {
  std::string log;
  std::string out;
  Profile profile = kDefaultProfile;
  int variants = 4;
  int tokens_per_block = 1;
};

// The number of traces written, or an error naming the line, flag or file.
Result<int> seed_serving_traces(const ServingSeedArgs& a);

}  // namespace r3
