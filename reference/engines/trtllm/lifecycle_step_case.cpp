// The one-step case of a trace step, for the per-step capture models (LifecycleModel::step_case):
// the base case on one DP rank, its rows the step's, padded to a CUDA-graph batch size when every
// request decodes (TensorRT-LLM's dummy generation requests; RouteCapture._prepare @ 06a976ce,
// aa94b01 lays them out as (none, -1)).
#include <algorithm>

#include "reference/engines/trtllm/lifecycle_rules.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/engines/trtllm/profile.hpp"
#include "reference/profile.hpp"

namespace r3::trtllm {

std::optional<Case> trace_step_case(const Trace& t, const Timeline& timeline, int step) {
  if (step < 0 || step >= static_cast<int>(timeline.steps.size()) || step >= static_cast<int>(t.steps.size()))
    return std::nullopt;
  const StepView& view = timeline.steps[static_cast<size_t>(step)];
  if (t.dp != 1 || view.rows.empty() || view.rows[0].empty()) return std::nullopt;
  Case c;
  c.engine = engine();
  c.topology = {1, t.tp, false, false};
  c.model = t.model;
  c.max_num_tokens = t.config.token_budget;
  const int64_t rows = static_cast<int64_t>(view.rows[0].size());
  c.tokens = {rows};
  const TraceStep& ts = t.steps[static_cast<size_t>(step)];
  const bool decode_only = std::all_of(ts.run.begin(), ts.run.end(), [](const Work& w) { return w.kind == Work::Kind::decode; });
  std::vector<int64_t> sizes;
  for (int64_t size : t.config.cuda_graph_decode)
    if (size <= c.max_num_tokens) sizes.push_back(size);
  if (decode_only && !sizes.empty() && rows <= sizes.back()) c.padding = {PaddingMode::cudagraph, sizes};
  c.path = Path::single;
  if (!model().validate(c).ok() || !check_step_profile(c).ok()) return std::nullopt;
  return c;
}

}  // namespace r3::trtllm
