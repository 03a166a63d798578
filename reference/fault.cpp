#include "reference/fault.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "reference/engine_model.hpp"
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
constexpr std::array<FaultInfo, 19> kFaults{{
    {Fault::none, "none", "none", FaultLayer::decision, "no fault"},
    {Fault::replay_per_rank, "replay-per-rank", "overflow", FaultLayer::allocation,
     "monolithic replay buffer of M rows (vLLM before PR #50874)"},
    {Fault::replay_dp_under_ep, "replay-dp-under-ep", "overflow (needs heavy SP padding)", FaultLayer::allocation,
     "monolithic replay buffer of M*D rows, also under EP+SP"},
    {Fault::tp_major_order, "tp-major-order", "ordering", FaultLayer::gather,
     "gathered SP shards (SGLang: the attn-TP slices of the MAX_LEN DP gather) ordered as if the group were t*D + d"},
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
     "every copy of a call moves one row too many (SGLang: every copy the window publishes)"},
    {Fault::chunk_row0, "chunk-row0", "ordering", FaultLayer::decision, "every DP chunk is written at buffer row 0"},
    // SGLang's: the mismatches its design invites between the layout capture sees and the window.
    {Fault::window_request_bucket, "window-request-bucket", "ordering", FaultLayer::decision,
     "a decode/verify-graph window under DP attention starts at r*bs (requests) instead of r*bs*w (tokens), "
     "upstream's cuda_graph_batch"},
    {Fault::no_attn_tp_gather, "no-attn-tp-gather", "wrong rows", FaultLayer::gather,
     "capture writes its attn-TP slice without the attn-TP all-gather (DeepEP and the scattered backends)"},
    {Fault::no_attn_tp_align, "no-attn-tp-align", "ordering", FaultLayer::decision,
     "a DP-gathered rank's rows looked up at offsets of the raw counts n, not of the attn_tp-aligned a"},
    {Fault::tbo_row0, "tbo-row0", "ordering", FaultLayer::decision,
     "every TBO child written at row 0 (sglang-fixed's TBO fix undone)"},
    // vllm-ascend's: the slots of the branch-5 TP all-gather, which must match what each TP rank holds.
    {Fault::alltoall_floor_first, "alltoall-floor-first", "collective / ordering", FaultLayer::gather,
     "the ALLTOALL TP all-gather cuts its buffer floor-sized parts first, where prepare's tensor_split put ceil first"},
    {Fault::mc2_own_count, "mc2-own-count", "collective / ordering", FaultLayer::gather,
     "the MC2 TP all-gather sizes its slots ceil(n_d/T) from the rank's own count, where prepare pads from the step's largest"},
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

}  // namespace

std::span<const Fault> all_faults() { return kTable; }

std::vector<Fault> faults_for(Engine engine) {
  std::vector<Fault> out;
  for (Fault f : all_faults())
    if (fault_applies(f, engine)) out.push_back(f);
  return out;
}

bool fault_applies(Fault f, Engine engine) { return f == Fault::none || engine.model().has_fault(f); }

CaptureCall call_under_fault(Fault f, CaptureCall call) {
  const EngineModel& model = call.engine.model();
  if (!model.has_fault(f)) return call;
  return model.call_under_fault(f, std::move(call));
}

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
  const EngineModel& model = call.engine.model();
  if (model.has_fault(f)) model.apply_decision_fault(f, call, out);
}

}  // namespace r3
