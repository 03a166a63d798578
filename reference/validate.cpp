#include "reference/validate.hpp"

#include <algorithm>
#include <concepts>
#include <string>
#include <string_view>

#include "reference/layout.hpp"
#include "reference/engine_model.hpp"
#include "reference/limits.hpp"

namespace r3 {
namespace {

std::string range_text(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

Status out_of_range(const std::string& field, int64_t value, int64_t lo, int64_t hi) {
  return Error{field + ": " + std::to_string(value) + " is out of range " + range_text(lo, hi)};
}

Status in_range(std::string_view field, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return ok_status();
  return out_of_range(std::string(field), value, lo, hi);
}

// The same for a field named from an index ("tokens[17]"), named only when out of range:
// derive_step() validates every generated case, and naming every entry cost more than checking it.
template <std::invocable Name>
Status in_range(const Name& name, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return ok_status();
  return out_of_range(name(), value, lo, hi);
}

Status validate_topology(const Topology& t) {
  R3_TRY_STATUS(in_range("topology.dp", t.dp, 1, limits::kMaxDp));
  R3_TRY_STATUS(in_range("topology.tp", t.tp, 1, limits::kMaxTp));
  if (t.sp && !t.ep) return Error{"topology.sp: sequence parallel needs ep true (vLLM enables SP MoE only with EP)"};
  if (t.sp && t.tp < 2) return Error{"topology.sp: sequence parallel needs tp > 1, tp is " + std::to_string(t.tp)};
  if (t.sp && t.dp < 2) return Error{"topology.sp: sequence parallel needs dp > 1, dp is " + std::to_string(t.dp)};
  return ok_status();
}

}  // namespace

Status validate_in_range(std::string_view field, int64_t value, int64_t lo, int64_t hi) {
  return in_range(field, value, lo, hi);
}

Status validate_model(const ModelShape& m) {
  R3_TRY_STATUS(in_range("model.layers", m.layers, 1, limits::kMaxLayers));
  R3_TRY_STATUS(in_range("model.experts", m.experts, 1, limits::kMaxExperts));
  R3_TRY_STATUS(in_range("model.top_k", m.top_k, 1, std::min<int64_t>(limits::kMaxTopK, m.experts)));
  return ok_status();
}

namespace {

Status validate_tokens(const Case& c) {
  if (static_cast<int64_t>(c.tokens.size()) != c.topology.dp) {
    return Error{"tokens: has " + std::to_string(c.tokens.size()) + " entries, topology.dp is " +
                 std::to_string(c.topology.dp) + " (one count per DP rank)"};
  }
  for (size_t d = 0; d < c.tokens.size(); ++d) {
    R3_TRY_STATUS(in_range([&] { return "tokens[" + std::to_string(d) + "]"; }, c.tokens[d], 0, limits::kMaxRows));
    if (c.tokens[d] > c.max_num_tokens) {
      return Error{"tokens[" + std::to_string(d) + "]: " + std::to_string(c.tokens[d]) + " exceeds max_num_tokens " +
                   std::to_string(c.max_num_tokens) + " (the scheduler never schedules more than M real tokens)"};
    }
  }
  return ok_status();
}

Status validate_padding(const Padding& p) {
  if (p.mode != PaddingMode::cudagraph) return ok_status();
  const auto& sizes = p.cudagraph_sizes;
  if (sizes.empty() || static_cast<int64_t>(sizes.size()) > limits::kMaxCudagraphSizes) {
    return Error{"padding.cudagraph: needs 1 to " + std::to_string(limits::kMaxCudagraphSizes) +
                 " capture sizes, has " + std::to_string(sizes.size())};
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto name = [&] { return "padding.cudagraph[" + std::to_string(i) + "]"; };
    R3_TRY_STATUS(in_range(name, sizes[i], 1, limits::kMaxRows));
    if (i > 0 && sizes[i] <= sizes[i - 1]) {
      return Error{"padding.cudagraph: sizes must be strictly increasing, entry " + std::to_string(i) + " (" +
                   std::to_string(sizes[i]) + ") follows " + std::to_string(sizes[i - 1])};
    }
  }
  return ok_status();
}

Status validate_path(const Case& c) {
  const Topology& t = c.topology;
  const std::string path(to_string(c.path));
  if (c.path == Path::single && t.dp != 1) {
    return Error{"path: single means no DP metadata and needs dp 1, dp is " + std::to_string(t.dp)};
  }
  if (c.path != Path::single && t.dp == 1) {
    return Error{"path: " + path + " needs dp > 1 (with dp 1 there is no DP metadata: use single)"};
  }
  if (c.path == Path::sp_shard && !t.sp) return Error{"path: sp_shard needs topology.sp true"};
  if (c.path == Path::local && t.sp) {
    return Error{"path: local with topology.sp true: the modular kernel sees the SP shard, use sp_shard"};
  }
  if (c.monolithic && (c.path == Path::local || c.path == Path::sp_shard)) {
    return Error{"monolithic: true needs path single or gathered (a monolithic kernel sees the whole input), path is " +
                 path};
  }
  return ok_status();
}

Status validate_calls(const Case& c) {
  R3_TRY_STATUS(in_range("microbatches", c.microbatches, 1, limits::kMaxMicrobatches));
  if (c.microbatches > 1) {
    if (c.topology.dp < 2) return Error{"microbatches: more than 1 needs dp > 1 (micro-batching runs only under DP)"};
    if (c.padding.mode != PaddingMode::dp_max) {
      return Error{"microbatches: more than 1 needs padding \"dp_max\" (every rank runs P = max real tokens)"};
    }
    if (c.dp_chunk) return Error{"dp_chunk: cannot be combined with microbatches > 1"};
  }
  if (c.dp_chunk) {
    R3_TRY_STATUS(in_range("dp_chunk", *c.dp_chunk, 1, limits::kMaxRows));
    if (c.path != Path::local && c.path != Path::sp_shard) {
      return Error{"dp_chunk: needs path local or sp_shard (DP chunking lives in modular kernels), path is " +
                   std::string(to_string(c.path))};
    }
    const int64_t most = most_rows_to_chunk(c);
    if (ceil_div(most, *c.dp_chunk) > limits::kMaxChunks) {
      return Error{"dp_chunk: " + std::to_string(*c.dp_chunk) + " splits the step into " +
                   std::to_string(ceil_div(most, *c.dp_chunk)) + " chunks, at most " +
                   std::to_string(limits::kMaxChunks) + " allowed"};
    }
  }
  return ok_status();
}

Status validate_entries(const std::string& field, const std::vector<int64_t>& values) {
  if (static_cast<int64_t>(values.size()) > limits::kMaxMetadataEntries) {
    return Error{field + ": has " + std::to_string(values.size()) + " entries, at most " +
                 std::to_string(limits::kMaxMetadataEntries) + " allowed"};
  }
  for (size_t i = 0; i < values.size(); ++i) {
    R3_TRY_STATUS(in_range([&] { return field + "[" + std::to_string(i) + "]"; }, values[i], 0, limits::kMaxRows));
  }
  return ok_status();
}

Status validate_metadata(const Case& c) {
  if (!c.metadata) return ok_status();
  if (c.microbatches > 1 || c.dp_chunk) {
    return Error{"metadata: overrides describe a single capture call; remove microbatches and dp_chunk"};
  }
  if (c.metadata->num_tokens_across_dp) {
    R3_TRY_STATUS(validate_entries("metadata.num_tokens_across_dp", *c.metadata->num_tokens_across_dp));
  }
  if (c.metadata->local_sizes) R3_TRY_STATUS(validate_entries("metadata.local_sizes", *c.metadata->local_sizes));
  return ok_status();
}

}  // namespace

Status validate(const Case& c) { return c.engine.model().validate(c); }

Status validate_base(const Case& c) {
  R3_TRY_STATUS(validate_topology(c.topology));
  R3_TRY_STATUS(validate_model(c.model));
  R3_TRY_STATUS(in_range("max_num_tokens", c.max_num_tokens, 1, limits::kMaxRows));
  R3_TRY_STATUS(validate_tokens(c));
  R3_TRY_STATUS(validate_padding(c.padding));
  R3_TRY_STATUS(validate_path(c));
  R3_TRY_STATUS(in_range("layer", c.layer, 0, c.model.layers - 1));
  R3_TRY_STATUS(validate_calls(c));
  R3_TRY_STATUS(validate_metadata(c));
  return ok_status();
}

}  // namespace r3
