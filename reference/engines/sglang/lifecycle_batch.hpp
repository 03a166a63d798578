// One step's batch as SGLang's forward lays it out: which rows of StepView::rows each work holds,
// and the order of a tree verify's rows in the forward (the draft tree's node order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::sglang {

// The rows of one work: StepView::rows[rank][first, first + count).
struct Segment {
  const Work* work = nullptr;
  int rank = 0;
  size_t first = 0;
  size_t count = 0;
  bool lagging = false;
  bool tree = false;  // a verify of a draft tree (config.spec.tree): its rows are tree nodes
};

// The works of step `step` in run order (the timeline lays each work's rows out in that order on
// its request's rank).
std::vector<Segment> segments_of(const Trace& t, const Timeline& timeline, int step);

// The draft tree's node order (docs/lifecycle-contract.md N7). A verify of width k forwards k + 1
// tree nodes, node 0 the input at q, in the order the forward lays them out: out_cache_loc slot m
// (the slot of position q + m) holds node m. A trace names only how many drafts were accepted (a),
// not which nodes, so the model fixes the tree: the rejected branch is drafted first (nodes
// 1 .. k - a), the accepted path last (nodes k - a + 1 .. k). Node i of the accepted path then
// sits at slot q + k - a + i, and the KV move (eagle_worker_common.py, _finalize_accept_tree_path;
// spec_utils.py, move_accept_tokens_to_target_kvcache @ 30cb848) brings it to slot q + i. The
// tree equals the chain exactly when a is 0 or k: then the accepted path is nodes 0..a, the one
// case where leaving the route rows behind is harmless.
//
// The batch row (offset in the work's rows: row i is position q + i, kept for i <= a) of node m.
int64_t tree_row_of_node(int64_t node, int64_t width, int64_t accepted);
// The node of accepted-path row i (0 <= i <= a).
int64_t tree_node_of_row(int64_t row, int64_t width, int64_t accepted);

}  // namespace r3::sglang
