// The shrinker's passes: each proposes smaller variants of a case, most-reducing first.
// Candidates are proposals only; the driver (shrink.cpp) validates and judges them. Each engine
// lists the passes for its cases (engine_shrink.hpp), from the shared ones below and its own.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz/generate/case_domain.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"

namespace r3 {

struct ShrinkPass {
  std::string_view name;
  CasePart part;  // the part of the case domain (fuzz/generate/case_domain.hpp) it reduces
  void (*propose)(const Case& current, std::vector<Case>& out);  // appends candidates
};

// The passes for cases of `engine`, in the order that helps a reader most (its shrink part's,
// engine_shrink.hpp); together they reduce every part of the case domain, each field toward its
// lowest_value(). A pass that changes the path is included only when allowed, since the bug
// signature names the path. Empty for an engine without a shrink part.
std::vector<ShrinkPass> shrink_passes(Engine engine, bool allow_path_change);

// The shared passes an engine's part lists. The base passes reduce the case format's own fields
// (the vLLM-family base case) in reader order: dp, tp, tokens, max_num_tokens, layers, model,
// padding, calls, monolithic, idle_dummy, path (when allowed), metadata. The model passes are
// its layers and model passes alone, for an engine whose cases share only the model and layer.
void append_base_passes(std::vector<ShrinkPass>& passes, bool allow_path_change);
void append_model_passes(std::vector<ShrinkPass>& passes);

// Values below `value` toward `target`, most-reducing
// first: target, then value minus half the distance, a quarter, ..., then value - 1.
// Empty when value <= target. (5, 0) -> 0, 3, 4; (8, 1) -> 1, 5, 7.
std::vector<int64_t> smaller_values(int64_t value, int64_t target);

// The chunks of a list of `size` entries to try removing, largest first: all of it, halves,
// quarters, ..., single entries, as [begin, end) index pairs.
// (4) -> [0,4) [0,2) [2,4) [0,1) [1,2) [2,3) [3,4).
std::vector<std::pair<size_t, size_t>> removable_chunks(size_t size);

}  // namespace r3
