#include "reference/engines/ascend/faults.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "reference/engines/ascend/layout.hpp"
#include "reference/layout.hpp"

namespace r3::ascend {
namespace {

bool reads_tp_gather(const CaptureDecision& d) {
  return std::any_of(d.copies.begin(), d.copies.end(), [](const Copy& c) { return c.from_tp_gather; });
}

// The slot TP rank t gets under `f` in a gather of `buffer` rows; -1 when `f` leaves it alone.
int64_t faulty_slot(Fault f, const StepFields& sf, const CaptureCall& call) {
  const int T = call.tp_size, t = call.tp_rank;
  const int64_t tpd = sf.counts[static_cast<size_t>(call.dp_rank)];
  if (sf.sp || T == 1) return -1;
  if (f == kAlltoallFloorFirst && sf.comm == Comm::alltoall) {
    const int64_t buffer = std::max<int64_t>(tpd, T);
    return buffer / T + (t >= T - buffer % T && buffer % T != 0 ? 1 : 0);
  }
  if (f == kMc2OwnCount && (sf.comm == Comm::mc2 || sf.comm == Comm::fused_mc2)) return ceil_div(tpd, T);
  return -1;
}

constexpr std::array<FaultEntry, 2> kOwnFaults{{
    {kAlltoallFloorFirst, "alltoall-floor-first", "collective / ordering", FaultLayer::gather,
     "the ALLTOALL TP all-gather cuts its buffer floor-sized parts first, where prepare's tensor_split put ceil first"},
    {kMc2OwnCount, "mc2-own-count", "collective / ordering", FaultLayer::gather,
     "the MC2 TP all-gather sizes its slots ceil(n_d/T) from the rank's own count, where prepare pads from the step's largest"},
}};

}  // namespace

std::span<const FaultEntry> own_faults() { return kOwnFaults; }

bool has_fault(Fault f) { return f == kAlltoallFloorFirst || f == kMc2OwnCount; }

void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) {
  const StepFields* sf = step_fields_of(call);
  if (!sf || out.rejected || !reads_tp_gather(out)) return;
  const int64_t slot = faulty_slot(f, *sf, call);
  if (slot < 0 || slot == call.rows) return;
  out.reject([&] {
    return "collective: TP rank " + std::to_string(call.tp_rank) + " sends " + std::to_string(call.rows) +
           " rows into an all_gather slot of " + std::to_string(slot) + " (" + std::string(to_string(f)) + ")";
  });
}

void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out) {
  base.decide(call, out);
  if (!out.rejected) ascend::apply_decision_fault(f, call, out);
}

}  // namespace r3::ascend
