#include "fuzz/mutants/fault.hpp"

#include <array>
#include <string>

namespace r3 {
namespace {

struct FaultInfo {
  Fault fault;
  std::string_view name;
  std::string_view bug_class;
};

constexpr std::array<FaultInfo, 12> kFaults{{
    {Fault::replay_per_rank, "replay-per-rank", "overflow"},
    {Fault::replay_dp_under_ep, "replay-dp-under-ep", "overflow (needs heavy SP padding)"},
    {Fault::tp_major_order, "tp-major-order", "ordering"},
    {Fault::unpadded_offset, "unpadded-offset", "ordering"},
    {Fault::no_trim, "no-trim", "overflow / garbage"},
    {Fault::floor_sp, "floor-sp", "ordering / lost rows"},
    {Fault::skip_tp_gather, "skip-tp-gather", "wrong rows"},
    {Fault::last_shard_pad, "last-shard-pad", "ordering"},
    {Fault::layer_unchecked, "layer-unchecked", "overflow"},
    {Fault::narrow_int16, "narrow-int16", "value overflow"},
    {Fault::off_by_one_copy, "off-by-one-copy", "overflow"},
    {Fault::chunk_row0, "chunk-row0", "ordering"},
}};

constexpr std::array<Fault, 12> kOrder = [] {
  std::array<Fault, 12> order{};
  for (size_t i = 0; i < kFaults.size(); ++i) order[i] = kFaults[i].fault;
  return order;
}();

const FaultInfo& info(Fault f) { return kFaults[static_cast<size_t>(f)]; }

}  // namespace

std::span<const Fault> all_faults() { return kOrder; }

std::string_view to_string(Fault f) { return info(f).name; }

std::string_view fault_class(Fault f) { return info(f).bug_class; }

Result<Fault> parse_fault(std::string_view name) {
  std::string names;
  for (const FaultInfo& f : kFaults) {
    if (f.name == name) return f.fault;
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  }
  return Error{"fault: \"" + std::string(name) + "\" is not one of " + names};
}

}  // namespace r3
