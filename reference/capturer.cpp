#include "reference/capturer.hpp"

namespace r3 {

RowTensor reference_source(const Call& call, const RankView& view) {
  if (view.tp_gathered >= 0) return call.tensors[static_cast<size_t>(view.tp_gathered)];
  return call.input_of(view);
}

const RowTensor& copy_source(const Call& call, const RankView& view, bool from_tp_gather, int tp, RowTensor& scratch) {
  if (!from_tp_gather) return call.rows_of(view, scratch);
  if (view.tp_gathered >= 0) return call.tensors[static_cast<size_t>(view.tp_gathered)];
  // A TP slice's tensor is its slices in turn, which is what gathering them returns.
  if (call.split_across_tp()) return call.tensors[static_cast<size_t>(view.received)];
  scratch.clear();
  for (int t = 0; t < tp; ++t) {
    const RankView member = call.view(view.dp, t);
    scratch.append_slice(call.tensors[static_cast<size_t>(member.received)], member.rows);
  }
  return scratch;
}

std::vector<Copy> expected_copies(const Call& call, const RankView& view) {
  std::vector<Copy> copies;
  const bool tp_gather = view.tp_gathered >= 0;
  int64_t row = 0;
  const RowTensor source = reference_source(call, view);  // held: runs() views into it
  for (const RowRun& run : source.runs()) {
    if (run.kind == RowKind::token && run.dp == view.dp) copies.push_back({run.first, row, run.length, tp_gather});
    row += run.length;
  }
  return copies;
}

std::optional<RowRange> expected_source_range(const Call& call, const RankView& view) {
  const std::vector<Copy> copies = expected_copies(call, view);
  if (copies.empty()) return RowRange{0, 0};
  for (size_t i = 1; i < copies.size(); ++i) {
    if (copies[i].src_row != copies[i - 1].src_row + copies[i - 1].rows) return std::nullopt;
  }
  return RowRange{copies.front().src_row, copies.back().src_row + copies.back().rows};
}

CaptureCall capture_call_for(const Step& step, const Call& call, const RankView& view, const BufferShape& buffer) {
  CaptureCall c;
  c.dp_rank = view.dp;
  c.tp_rank = view.tp;
  c.dp_size = step.dp;
  c.tp_size = step.tp;
  c.rows = view.rows.size();
  c.metadata = call.metadata ? &*call.metadata : nullptr;
  c.layer = step.layer;
  c.capture_buffer = buffer;
  c.call_index = call.index;
  c.call_count = static_cast<int>(step.calls.size());
  c.row_offset = call.row_offset;
  c.chunk_size = call.chunk_size;
  c.engine = step.engine;
  if (step.engine_step) {
    c.engine_step = &step.engine_step;
    c.rows_written = view.tp_gathered >= 0 ? call.tensors[static_cast<size_t>(view.tp_gathered)].rows() : view.rows.size();
  }
  return c;
}

}  // namespace r3
