#include "gpu/detail/plan_support.hpp"

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

TensorRef all_gatherv(DevicePlan& plan, const std::vector<TensorRef>& parts, const std::vector<int64_t>& offsets,
                      int top_k, std::vector<BufferJob>& checked) {
  int64_t rows = 0;
  for (const TensorRef& p : parts) rows += p.rows;
  const BufferJob out = place(plan, false, rows, kMinGuardRows, top_k, top_k, Fill::tensor);
  checked.push_back(out);
  GatherOp op;
  for (size_t r = 0; r < parts.size(); ++r) {
    op.pieces.push_back({parts[r].row0, out.row0() + offsets[r] * top_k, parts[r].rows * top_k, static_cast<int32_t>(r)});
  }
  plan.gathers.push_back(std::move(op));
  return tensor_ref(out);
}

std::vector<TensorRef> gather_tp_groups(DevicePlan& plan, const std::vector<bool>& needs,
                                        const std::vector<TensorRef>& received, int tp, int top_k,
                                        std::vector<BufferJob>& checked) {
  std::vector<TensorRef> out(needs.size());
  for (size_t d = 0; d < needs.size(); ++d) {
    if (!needs[d]) continue;
    const auto first = received.begin() + static_cast<std::ptrdiff_t>(d * static_cast<size_t>(tp));
    std::vector<TensorRef> parts(first, first + tp);
    std::vector<int64_t> offsets(static_cast<size_t>(tp), 0);
    for (size_t t = 1; t < parts.size(); ++t) offsets[t] = offsets[t - 1] + parts[t - 1].rows;
    out[d] = all_gatherv(plan, parts, offsets, top_k, checked);
  }
  return out;
}

}  // namespace r3::gpu::detail
