#include "reference/fault.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <mutex>
#include <numeric>
#include <string>

#include "reference/engine_model.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

// The layout faults, in Fault's order (entry() indexes it), none first.
constexpr std::array<FaultEntry, kFirstOwnFault> kLayoutFaults{{
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
}};

constexpr bool layout_table_in_enum_order() {
  for (size_t i = 0; i < kLayoutFaults.size(); ++i)
    if (static_cast<size_t>(kLayoutFaults[i].fault) != i) return false;
  return true;
}
static_assert(layout_table_in_enum_order(), "kLayoutFaults is indexed by Fault");

// The whole table: the layout faults, then every registered engine's own. It is rebuilt when an
// engine registers after a fault was first named (add_engine, a plug-in's engine), so its own
// faults are listed too. Engines register at start-up, before any worker thread runs; the lock
// only orders the first builds of threads that start together.
struct FaultTable {
  size_t engines = 0;  // how many engines it was built for
  std::vector<Fault> order;
  std::vector<FaultEntry> own;
};

FaultTable build_table(std::span<const EngineModel* const> models) {
  FaultTable out;
  out.engines = models.size();
  for (size_t i = 1; i < kLayoutFaults.size(); ++i) out.order.push_back(kLayoutFaults[i].fault);
  for (const EngineModel* model : models)
    for (const FaultEntry& e : model->own_faults()) {
      out.order.push_back(e.fault);
      out.own.push_back(e);
    }
  return out;
}

const FaultTable& table() {
  static std::mutex building;
  static std::atomic<const FaultTable*> current{nullptr};
  const auto models = engine_models();
  const FaultTable* t = current.load(std::memory_order_acquire);
  if (t != nullptr && t->engines == models.size()) return *t;
  const std::lock_guard<std::mutex> lock(building);
  t = current.load(std::memory_order_acquire);
  if (t == nullptr || t->engines != models.size()) {
    // Earlier tables stay alive: a span all_faults() handed out keeps pointing at its own.
    static std::deque<FaultTable> built;
    built.push_back(build_table(models));
    t = &built.back();
    current.store(t, std::memory_order_release);
  }
  return *t;
}

const FaultEntry& entry(Fault f) {
  const auto id = static_cast<size_t>(f);
  if (id < kLayoutFaults.size()) return kLayoutFaults[id];
  for (const FaultEntry& e : table().own)
    if (e.fault == f) return e;
  return kLayoutFaults[0];  // not a fault of the table: only a Fault cast from a number gets here
}

}  // namespace

std::span<const Fault> all_faults() { return table().order; }

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

std::string_view to_string(Fault f) { return entry(f).name; }

std::string_view to_string(FaultLayer layer) {
  switch (layer) {
    case FaultLayer::allocation: return "allocation";
    case FaultLayer::check: return "check";
    case FaultLayer::decision: return "decision";
    case FaultLayer::gather: return "gather";
  }
  return "?";
}

std::string_view fault_class(Fault f) { return entry(f).bug_class; }

std::string_view fault_description(Fault f) { return entry(f).description; }

FaultLayer fault_layer(Fault f) { return entry(f).layer; }

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
