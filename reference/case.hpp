// The case: one scheduler step of one MoE layer on every rank, as design.md's format
// "r3fuzz-case/1" describes it. Plain data; validation lives in validate.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/engine.hpp"
#include "reference/engine_data.hpp"
#include "reference/error.hpp"
#include "reference/verdict.hpp"

namespace r3 {

struct Topology {
  int dp = 1;       // D: data-parallel ranks
  int tp = 1;       // T: tensor-parallel ranks per DP rank
  bool ep = false;  // expert parallel: the EP group is all D*T ranks
  bool sp = false;  // sequence-parallel MoE (needs ep, tp > 1, dp > 1)
  bool operator==(const Topology&) const = default;
};

struct ModelShape {
  int layers = 1;   // L
  int top_k = 1;    // K
  int experts = 1;  // E
  bool operator==(const ModelShape&) const = default;
};

enum class PaddingMode { none, dp_max, cudagraph };

struct Padding {
  PaddingMode mode = PaddingMode::none;
  std::vector<int64_t> cudagraph_sizes;  // only for PaddingMode::cudagraph, strictly increasing
  bool operator==(const Padding&) const = default;
};

// Where capture() sees the routing tensor (docs/layout-contract.md section 5).
enum class Path { single, gathered, local, sp_shard };


// Metadata as an engine logged it; each field absent means "derive it", and local_sizes
// may be explicitly unset (null) to model an engine that never filled it in.
struct MetadataOverride {
  std::optional<std::vector<int64_t>> num_tokens_across_dp;
  bool local_sizes_given = false;
  std::optional<std::vector<int64_t>> local_sizes;  // nullopt with local_sizes_given: unset
  bool operator==(const MetadataOverride&) const = default;
};

// A regression entry's documented outcome.
struct Expectation {
  std::string impl;
  Verdict verdict = Verdict::pass;
  Severity severity = Severity::none;
  bool operator==(const Expectation&) const = default;
};

struct Case {
  Engine engine;  // "engine" (absent: the default engine, the registry's first)
  Topology topology;
  ModelShape model;
  int64_t max_num_tokens = 1;    // M
  std::vector<int64_t> tokens;   // real tokens per DP rank
  Padding padding;
  // An idle DP rank (0 real tokens) still runs the step with one dummy token, a padding row
  // (docs/layout-contract.md section 1): its count becomes 1 before DP or CUDA-graph padding.
  bool idle_dummy = false;
  Path path = Path::single;
  bool monolithic = false;
  int layer = 0;
  int microbatches = 1;          // U (docs/layout-contract.md 9.1)
  std::optional<int64_t> dp_chunk;  // C (docs/layout-contract.md 9.2)
  std::optional<MetadataOverride> metadata;
  std::string note;
  std::optional<Expectation> expect;
  std::optional<Profile> profile;  // the profile the case was produced under, when recorded
  // The engine's own fields, for an engine whose cases need more than the fields above (which
  // such an engine may leave at their defaults): see its folder under reference/engines/.
  EngineData engine_fields;
  bool operator==(const Case&) const = default;
};

std::string_view to_string(Path path);
std::string_view to_string(PaddingMode mode);
Result<Path> parse_path(std::string_view text);

inline constexpr std::string_view kCaseFormat = "r3fuzz-case/1";

}  // namespace r3
