// The faults of the mutant table that SGLang's capture can have, the decisions an SGLang capture
// with one takes, and how a policy model (which has no gather) carries them.
#pragma once

#include <cstdint>
#include <span>

#include "reference/capture.hpp"
#include "reference/fault.hpp"
#include "reference/policy.hpp"

namespace r3::sglang {

// SGLang's own faults (docs/MUTANTS.md, "SGLang faults"): the mismatches its design invites
// between the layout capture sees and the window.
// window-request-bucket: the graph window at r * bs (requests), not r * bs * w (tokens).
inline constexpr Fault kWindowRequestBucket = own_fault("window-request-bucket");
// no-attn-tp-gather: capture writes its attn-TP slice, not the slice's attn-TP all-gather.
inline constexpr Fault kNoAttnTpGather = own_fault("no-attn-tp-gather");
// no-attn-tp-align: a rank's rows looked up at offsets of the unaligned counts n, not a.
inline constexpr Fault kNoAttnTpAlign = own_fault("no-attn-tp-align");
// tbo-row0: every TBO child written at row 0.
inline constexpr Fault kTboRow0 = own_fault("tbo-row0");

// Their rows of the mutant table, in that order.
std::span<const FaultEntry> own_faults();

bool has_fault(Fault f);
// The decision as an SGLang capture with `f` takes it, from the correct, not rejected `out`.
void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out);
// What capture is handed under `f`: no-attn-tp-gather hands it the attn-TP slice it holds
// instead of the capturer's attn-TP all-gather, so the rows it writes are the slice's.
CaptureCall call_under_fault(Fault f, CaptureCall call);

// SGLang's DP gather under tp-major-order (layers/dp_attention.py, _dp_gather_via_all_gather:
// with attn_tp > 1 each attn-TP rank all-gathers its 1/attn_tp slice of the rank's padded
// batch over the whole TP group, so group rank d * T + t holds slice t of rank d): the
// gathered slices in t * D + d order. Whether the fault reorders this call's gather (MAX_LEN
// or decode-graph segments of equal size m, divisible by T > 1), and the slice size m / T.
struct GatherSlices {
  bool reordered = false;
  int64_t slice = 0;
};
GatherSlices tp_major_slices(Fault f, const CaptureCall& call);

// The decision of a policy model `base` with `f`, its gather faults emulated in the decision.
void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out);

}  // namespace r3::sglang
