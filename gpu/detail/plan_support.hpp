// The planner's building blocks, shared by the base step planner (plan.cpp) and the engines' own
// (gpu/engines/NAME/plan.cpp): placing guarded buffers in an arena, materialising a rank's rows, and
// an all-gatherv of contributions into a new tensor.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gpu/detail/device_plan.hpp"
#include "reference/rows.hpp"

namespace r3::gpu::detail {

struct TensorRef {
  int64_t row0 = 0;  // element of row 0
  int64_t rows = 0;
  int64_t lo = 0, hi = 0;  // guarded region
};

// A guarded buffer of `rows` rows appended to arena16 (narrow) or arena32.
BufferJob place(DevicePlan& plan, bool narrow, int64_t rows, int64_t guard, int64_t width, int top_k, Fill fill);

TensorRef tensor_ref(const BufferJob& b);

// A rank's own rows, with the values reference/provenance.hpp gives them.
TensorRef materialize(DevicePlan& plan, const RowTensor& rows, int top_k);

// All-gatherv of `parts` (group-rank order) into a new tensor; part r lands at offsets[r]. The
// output joins `checked`, whose guards the pipeline checks itself.
TensorRef all_gatherv(DevicePlan& plan, std::span<const TensorRef> parts, std::span<const int64_t> offsets,
                      int top_k, std::vector<BufferJob>& checked);

// Per DP rank d with needs[d]: the TP all-gatherv of what its T ranks received (received is DP-major,
// d*T + t), in TP order: vLLM's SP-shard gather and SGLang's attn-TP gather alike. Written to
// `out`, one per DP rank (empty refs elsewhere).
void gather_tp_groups(DevicePlan& plan, const std::vector<bool>& needs, std::span<const TensorRef> received, int tp,
                      int top_k, std::vector<BufferJob>& checked, std::vector<TensorRef>& out);

}  // namespace r3::gpu::detail
