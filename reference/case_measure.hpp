// How big a case reads and how it reads in one line: the measures the shrinker reports and the
// benchmark compares, and the summaries reports print.
#pragma once

#include <string>
#include <vector>

#include "reference/case.hpp"

namespace r3 {

// Fields a reader must look at: every scalar that differs from Case's default (dp 1, tp 1,
// no EP/SP, one layer, top-k 1, one expert, M 1, padding none, path single, not monolithic,
// layer 0, one micro-batch, no DP chunk, no idle dummy), plus each non-zero token count, each CUDA-graph
// size, each metadata entry given, a note and an expectation, and the engine's own fields'.
int non_default_fields(const Case& c);

// What changed from `before` to `after`, one "field old -> new" item per field, e.g.
// {"dp 32 -> 16", "tokens [4096 x16 ...] -> [1, 0]"}. Empty when they are equal.
std::vector<std::string> describe_changes(const Case& before, const Case& after);

// A one-line summary, the engine's (EngineModel::summarize).
std::string summarize(const Case& c);
// The summary of the case's own fields: "dp 2 tp 2 ep sp, M 1, tokens [1, 0], L 1 K 1 E 1,
// padding none, path gathered, layer 0".
std::string summarize_base(const Case& c);

// Long lists read as their first entries and a count: tokens of 32 ranks fit on one line.
std::string list_text(const std::vector<int64_t>& v);

}  // namespace r3
