#include "reference/fault.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "reference/layout.hpp"

namespace r3 {
namespace {

struct FaultInfo {
  Fault fault;
  std::string_view name;
  std::string_view bug_class;
  FaultLayer layer;
  std::string_view description;
};

// In Fault's order (info() indexes it), none first.
constexpr std::array<FaultInfo, 13> kFaults{{
    {Fault::none, "none", "none", FaultLayer::decision, "no fault"},
    {Fault::replay_per_rank, "replay-per-rank", "overflow", FaultLayer::allocation,
     "monolithic replay buffer of M rows (vLLM before PR #50874)"},
    {Fault::replay_dp_under_ep, "replay-dp-under-ep", "overflow (needs heavy SP padding)", FaultLayer::allocation,
     "monolithic replay buffer of M*D rows, also under EP+SP"},
    {Fault::tp_major_order, "tp-major-order", "ordering", FaultLayer::gather,
     "gathered SP shards ordered as if the EP group were t*D + d"},
    {Fault::unpadded_offset, "unpadded-offset", "ordering", FaultLayer::decision,
     "gathered_shards starts at sum(num_tokens_across_dp[:d]) (no SP padding)"},
    {Fault::no_trim, "no-trim", "overflow / garbage", FaultLayer::decision,
     "SP branches copy T*s_d rows (the padded shard total) instead of n_d"},
    {Fault::floor_sp, "floor-sp", "ordering / lost rows", FaultLayer::gather,
     "SP shard size floor(n_d/T): shard test, offsets and row counts use it"},
    {Fault::skip_tp_gather, "skip-tp-gather", "wrong rows", FaultLayer::gather,
     "sp_allgather copies the local shard, without the TP all-gather"},
    {Fault::last_shard_pad, "last-shard-pad", "ordering", FaultLayer::decision,
     "SP branches take (T-1)*s_d rows as real when padding spans several shards"},
    {Fault::layer_unchecked, "layer-unchecked", "overflow", FaultLayer::check,
     "layer >= L is not rejected (the case format cannot express such a layer)"},
    {Fault::narrow_int16, "narrow-int16", "value overflow", FaultLayer::allocation,
     "replay ids stored in 16 bits whatever E is"},
    {Fault::off_by_one_copy, "off-by-one-copy", "overflow", FaultLayer::decision,
     "every copy of a call moves one row too many"},
    {Fault::chunk_row0, "chunk-row0", "ordering", FaultLayer::decision, "every DP chunk is written at buffer row 0"},
}};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kFaults.size(); ++i)
    if (static_cast<size_t>(kFaults[i].fault) != i) return false;
  return true;
}
static_assert(table_in_enum_order(), "kFaults is indexed by Fault");

constexpr std::array<Fault, kFaults.size() - 1> kTable = [] {
  std::array<Fault, kFaults.size() - 1> order{};
  for (size_t i = 1; i < kFaults.size(); ++i) order[i - 1] = kFaults[i].fault;
  return order;
}();

const FaultInfo& info(Fault f) { return kFaults[static_cast<size_t>(f)]; }

int64_t own_count(const CaptureCall& call) {
  return call.metadata->num_tokens_across_dp[static_cast<size_t>(call.dp_rank)];
}

// gathered_shards located at the prefix sum of the token counts, as if no rank were padded.
void unpadded_offset(const CaptureCall& call, CaptureDecision& out) {
  if (out.branch != branch::gathered_shards) return;
  const auto& across = call.metadata->num_tokens_across_dp;
  const int64_t start = std::accumulate(across.begin(), across.begin() + call.dp_rank, int64_t{0});
  for (Copy& copy : out.copies) copy.src_row = start;
}

void no_trim(const CaptureCall& call, CaptureDecision& out) {
  if (!sp_sharded_call(call) || !is_sp_branch(out)) return;
  const int T = call.tp_size;
  if (call.chunk_size == 0) {
    for (Copy& copy : out.copies) copy.rows = T * ceil_div(own_count(call), T);
    return;
  }
  // A DP chunk: every TP rank's chunk copied whole, padding included.
  const int64_t per_tp = ceil_div(own_count(call), T);
  out.copies.clear();
  for (int t = 0; t < T; ++t) out.copies.push_back({t * per_tp + call.row_offset, t * call.rows, call.rows, true});
}

void last_shard_pad(const CaptureCall& call, CaptureDecision& out) {
  if (!sp_sharded_call(call) || !is_sp_branch(out) || call.chunk_size > 0 || out.copies.empty()) return;
  const int64_t n_d = own_count(call);
  const int T = call.tp_size;
  out.copies.front().rows = std::max(n_d, (T - 1) * ceil_div(n_d, T));
}

}  // namespace

std::span<const Fault> all_faults() { return kTable; }

std::string_view to_string(Fault f) { return info(f).name; }

std::string_view to_string(FaultLayer layer) {
  switch (layer) {
    case FaultLayer::allocation: return "allocation";
    case FaultLayer::check: return "check";
    case FaultLayer::decision: return "decision";
    case FaultLayer::gather: return "gather";
  }
  return "?";
}

std::string_view fault_class(Fault f) { return info(f).bug_class; }

std::string_view fault_description(Fault f) { return info(f).description; }

FaultLayer fault_layer(Fault f) { return info(f).layer; }

Result<Fault> parse_fault(std::string_view name) {
  std::string names;
  for (Fault f : all_faults()) {
    if (to_string(f) == name) return f;
    names += (names.empty() ? "" : ", ") + std::string(to_string(f));
  }
  return Error{"fault: \"" + std::string(name) + "\" is not one of " + names};
}

bool sp_sharded_call(const CaptureCall& call) {
  const auto* md = call.metadata;
  return md && md->local_sizes && call.tp_size > 1 &&
         md->local_sizes->size() == static_cast<size_t>(call.dp_size) * static_cast<size_t>(call.tp_size);
}

bool is_sp_branch(const CaptureDecision& d) {
  return d.branch == branch::gathered_shards || d.branch == branch::sp_allgather;
}

void apply_allocation_fault(Fault f, const Case& c, Allocation& a) {
  // narrow-int16 narrows the replay ids; without a replay buffer there are none to narrow.
  if (!c.monolithic) return;
  if (f == Fault::replay_per_rank) a.replay_rows = c.max_num_tokens;
  if (f == Fault::replay_dp_under_ep) a.replay_rows = c.max_num_tokens * c.topology.dp;
  if (f == Fault::narrow_int16) a.replay_bits = 16;
}

void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) {
  if (out.rejected) return;
  switch (f) {
    case Fault::unpadded_offset: return unpadded_offset(call, out);
    case Fault::no_trim: return no_trim(call, out);
    case Fault::last_shard_pad: return last_shard_pad(call, out);
    case Fault::off_by_one_copy:
      // One off-by-one in the engine's copy loop: every copy it makes is one row long.
      for (Copy& copy : out.copies) copy.rows += 1;
      return;
    case Fault::chunk_row0:
      // A copy that already starts before the chunk's offset (vllm-50874 writes every chunk at
      // row 0) stays at row 0.
      if (call.chunk_size > 0)
        for (Copy& copy : out.copies) copy.dst_row = std::max<int64_t>(0, copy.dst_row - call.row_offset);
      return;
    default: return;  // a fault of another layer
  }
}

}  // namespace r3
