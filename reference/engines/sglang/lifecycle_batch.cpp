#include "reference/engines/sglang/lifecycle_batch.hpp"

#include "reference/error.hpp"

namespace r3::sglang {

std::vector<Segment> segments_of(const Trace& t, const Timeline& timeline, int step) {
  const TraceStep& spec = t.steps[static_cast<size_t>(step)];
  const StepView& view = timeline.steps[static_cast<size_t>(step)];
  std::vector<size_t> cursor(view.rows.size(), 0);
  std::vector<Segment> out;
  for (const Work& w : spec.run) {
    Segment s;
    s.work = &w;
    s.rank = t.requests[static_cast<size_t>(w.req)].dp;
    s.first = cursor[static_cast<size_t>(s.rank)];
    const int width = t.config.spec ? t.config.spec->width : 0;
    s.count = w.kind == Work::Kind::extend   ? static_cast<size_t>(w.hi - w.lo)
              : w.kind == Work::Kind::verify ? static_cast<size_t>(width + 1)
                                             : 1;
    const std::vector<BatchRow>& rows = view.rows[static_cast<size_t>(s.rank)];
    R3_CHECK(s.first + s.count <= rows.size() && rows[s.first].req == w.req,
             "the timeline lays works out in run order");
    s.lagging = rows[s.first].lagging;
    s.tree = w.kind == Work::Kind::verify && t.config.spec->tree;
    cursor[static_cast<size_t>(s.rank)] += s.count;
    out.push_back(s);
  }
  return out;
}

int64_t tree_row_of_node(int64_t node, int64_t width, int64_t accepted) {
  const int64_t rejected = width - accepted;
  if (node == 0) return 0;
  if (node <= rejected) return accepted + node;  // the rejected branch, drafted first
  return node - rejected;                        // the accepted path
}

int64_t tree_node_of_row(int64_t row, int64_t width, int64_t accepted) {
  if (row == 0) return 0;
  return width - accepted + row;
}

}  // namespace r3::sglang
