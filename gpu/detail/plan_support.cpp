#include "gpu/detail/plan_support.hpp"

#include "reference/error.hpp"
#include "reference/guard_rows.hpp"
#include "reference/provenance.hpp"

namespace r3::gpu::detail {

BufferJob place(DevicePlan& plan, bool narrow, int64_t rows, int64_t guard, int64_t width, int top_k, Fill fill) {
  int64_t& arena = narrow ? plan.arena16 : plan.arena32;
  BufferJob b{arena, rows, guard, width, top_k, fill, fill == Fill::tensor ? kTensorCanary : kCanary};
  arena += b.elements();
  (narrow ? plan.buffers16 : plan.buffers32).push_back(b);
  return b;
}

TensorRef tensor_ref(const BufferJob& b) { return {b.row0(), b.rows, b.offset, b.offset + b.elements()}; }

TensorRef materialize(DevicePlan& plan, const RowTensor& rows, int top_k) {
  const TensorRef t = tensor_ref(place(plan, false, rows.rows(), kMinGuardRows, top_k, top_k, Fill::tensor));
  int64_t row = 0;
  for (const RowRun& run : rows.runs()) {
    plan.materialize.push_back({t.row0 + row * top_k, run.length, run.first, static_cast<int32_t>(run.kind), run.dp,
                                top_k});
    row += run.length;
  }
  return t;
}

namespace {

// The all-gatherv's output and its op: part r lands offsets[r] rows into the output, or, with
// no offsets, right after part r - 1 (a TP group's parts in TP order).
TensorRef gather_into_new(DevicePlan& plan, std::span<const TensorRef> parts, const int64_t* offsets, int top_k,
                          std::vector<BufferJob>& checked) {
  int64_t rows = 0;
  for (const TensorRef& p : parts) rows += p.rows;
  const BufferJob out = place(plan, false, rows, kMinGuardRows, top_k, top_k, Fill::tensor);
  checked.push_back(out);
  GatherOp& op = plan.add_gather();
  int64_t next = 0;
  for (size_t r = 0; r < parts.size(); ++r) {
    const int64_t at = offsets ? offsets[r] : next;
    op.pieces.push_back({parts[r].row0, out.row0() + at * top_k, parts[r].rows * top_k, static_cast<int32_t>(r)});
    next += parts[r].rows;
  }
  return tensor_ref(out);
}

}  // namespace

TensorRef all_gatherv(DevicePlan& plan, std::span<const TensorRef> parts, std::span<const int64_t> offsets,
                      int top_k, std::vector<BufferJob>& checked) {
  R3_CHECK(offsets.size() == parts.size(), "an offset for every part");
  return gather_into_new(plan, parts, offsets.data(), top_k, checked);
}

void gather_tp_groups(DevicePlan& plan, const std::vector<bool>& needs, std::span<const TensorRef> received, int tp,
                      int top_k, std::vector<BufferJob>& checked, std::vector<TensorRef>& out) {
  out.assign(needs.size(), TensorRef{});
  for (size_t d = 0; d < needs.size(); ++d) {
    if (!needs[d]) continue;
    const auto parts = received.subspan(d * static_cast<size_t>(tp), static_cast<size_t>(tp));
    out[d] = gather_into_new(plan, parts, nullptr, top_k, checked);
  }
}

}  // namespace r3::gpu::detail
