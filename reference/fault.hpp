// The named faults of the mutant table (docs/MUTANTS.md): bug classes injected into an
// implementation that is otherwise correct, to measure how fast the harness finds each one.
// One table for every carrier: the policy models (fuzz/implementations/faulty_policy.hpp) and the GPU
// pipeline (gpu/) name, describe and apply the same faults, and each change of an allocation or
// a capture decision is written here once.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/policy.hpp"

namespace r3 {

// Where in an engine the bug sits. A carrier injects a fault in that layer when it has one:
// the GPU pipeline carries gather faults in its all-gathers, the policy models (which have no
// gather) emulate them in their decisions.
enum class FaultLayer {
  allocation,  // the size or element width of a buffer: apply_allocation_fault
  check,       // a check the engine skips (layer-unchecked)
  decision,    // which rows a capture call copies where: apply_decision_fault
  gather,      // how the all-gathers lay out the ranks' rows
};

// The layout faults, which any engine whose capture has the layout can carry (each engine says
// which in EngineModel::has_fault), then an engine's own faults (own_fault below).
enum class Fault : uint16_t {
  none,                // no fault injected (an implementation's default; never in the table)
  replay_per_rank,     // replay buffer sized M (before #50874)
  replay_dp_under_ep,  // replay buffer sized M*D even under EP+SP
  tp_major_order,      // shards ordered t*D + d
  unpadded_offset,     // branch gathered_shards starts at the unpadded prefix sum of n
  no_trim,             // copies T*s_d rows instead of n_d
  floor_sp,            // SP shard size floor(n/T)
  skip_tp_gather,      // sp_shard path copies the local shard without the TP all-gather
  last_shard_pad,      // assumes only the last SP shard is short
  layer_unchecked,     // layer >= L not rejected
  narrow_int16,        // expert ids stored in int16 with E > 32767
  off_by_one_copy,     // every copy of a call moves one row too many
  chunk_row0,          // every DP chunk written at row 0
};
inline constexpr uint16_t kFirstOwnFault = static_cast<uint16_t>(Fault::chunk_row0) + 1;

// An engine's own fault, declared in its folder (reference/engines/NAME/faults.hpp) and listed
// by its EngineModel::own_faults(): its id derives from its table name (FNV-1a), so no engine
// needs another's numbering. tests/reference/fault_test.cpp checks that no two ids collide.
constexpr Fault own_fault(std::string_view name) {
  uint32_t h = 2166136261u;
  for (char ch : name) h = (h ^ static_cast<uint8_t>(ch)) * 16777619u;
  return static_cast<Fault>(kFirstOwnFault + h % (0x10000u - kFirstOwnFault));
}

// A row of the mutant table: the fault, its name ("replay-per-rank"), the bug class it stands
// for, the layer it sits in and what it changes, in one line.
struct FaultEntry {
  Fault fault;
  std::string_view name;
  std::string_view bug_class;
  FaultLayer layer;
  std::string_view description;
};

// Every fault but none, in the table's order (docs/MUTANTS.md's): the layout faults, then each
// engine's own, in registry order.
std::span<const Fault> all_faults();
// Those that apply to the engine (fault_applies), in the same order.
std::vector<Fault> faults_for(Engine engine);

// "replay-per-rank", ... (the mutant table's names; "none" for Fault::none).
std::string_view to_string(Fault f);
std::string_view to_string(FaultLayer layer);

// The bug class the table gives the fault ("overflow", "ordering", ...).
std::string_view fault_class(Fault f);

// What the fault changes, in one line.
std::string_view fault_description(Fault f);

FaultLayer fault_layer(Fault f);

// Whether the fault is a bug an engine's capture can have (EngineModel::has_fault): a layout
// fault where the engine has the layout, an engine's own fault in that engine. A carrier
// carries only the faults of the engine it serves.
bool fault_applies(Fault f, Engine engine);

// Parses a table name ("none" is not one); the error lists every valid name.
Result<Fault> parse_fault(std::string_view name);

// The buffers as a faulty engine sizes them: the replay buffer of M or M*D rows, or 16-bit
// replay ids whatever E is. No change for a fault of another layer.
void apply_allocation_fault(Fault f, const Case& c, Allocation& allocation);

// SP is on for a call when local_sizes has one entry per (DP rank, TP rank): the gathered
// tensor is SP-sharded (r3-fixed's own test; vLLM's row-count test can be fooled).
bool sp_sharded_call(const CaptureCall& call);

// The decision takes rows of an SP-sharded tensor: gathered_shards or sp_allgather.
bool is_sp_branch(const CaptureDecision& decision);

// The capture decision as a faulty engine takes it, from the correct `decision` for `call`.
// No change for a fault of another layer or another engine, or for a rejected call.
void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& decision);

// What capture is handed under the fault, before it decides: no-attn-tp-gather hands an SGLang
// capture the attn-TP slice it holds instead of the capturer's attn-TP all-gather, so the rows
// it writes are the slice's. No change for any other fault.
CaptureCall call_under_fault(Fault f, CaptureCall call);

}  // namespace r3
