// The one-step vLLM case of a trace step, for the per-step capture policies
// (LifecycleModel::step_case): the step's rows per DP rank as the case's token counts, laid out
// the way vLLM pads them (docs/layout-contract.md sections 1 and 5).
#include <algorithm>

#include "reference/engines/vllm/lifecycle_rules.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3::vllm {
namespace {

// A step whose every request decodes or verifies: vLLM's uniform decode batch, the one its
// decode CUDA graphs capture (config.cuda_graph_decode).
bool decode_only(const TraceStep& s) {
  return !s.run.empty() && std::all_of(s.run.begin(), s.run.end(), [](const Work& w) {
    return w.kind == Work::Kind::decode || w.kind == Work::Kind::verify;
  });
}

// vllm/config/vllm.py, VllmConfig._set_cudagraph_sizes: sizes above max_num_batched_tokens are
// dropped and M itself added (docs/layout-contract.md section 1).
std::vector<int64_t> clamped_sizes(std::vector<int64_t> sizes, int64_t m) {
  if (sizes.empty() || sizes.back() <= m) return sizes;
  std::erase_if(sizes, [&](int64_t s) { return s > m; });
  if (sizes.empty() || sizes.back() < m) sizes.push_back(m);
  return sizes;
}

}  // namespace

std::optional<Case> trace_step_case(const Trace& t, const Timeline& timeline, int step) {
  if (step < 0 || step >= static_cast<int>(timeline.steps.size()) || step >= static_cast<int>(t.steps.size())) {
    return std::nullopt;
  }
  const StepView& view = timeline.steps[step];
  Case c;
  c.engine = engine();
  c.topology = {t.dp, t.tp, false, false};
  c.model = t.model;
  c.max_num_tokens = t.config.token_budget;
  for (int d = 0; d < t.dp; ++d) {
    c.tokens.push_back(d < static_cast<int>(view.rows.size()) ? static_cast<int64_t>(view.rows[d].size()) : 0);
  }
  // An idle DP rank runs one dummy token (Worker.execute_dummy_batch; layout contract 1).
  c.idle_dummy = t.dp > 1;
  int64_t widest = 0;
  for (int64_t n : c.tokens) widest = std::max(widest, c.idle_dummy ? std::max<int64_t>(n, 1) : n);
  const std::vector<int64_t> sizes = clamped_sizes(t.config.cuda_graph_decode, c.max_num_tokens);
  if (decode_only(t.steps[step]) && !sizes.empty() && widest <= sizes.back()) {
    c.padding = {PaddingMode::cudagraph, sizes};
  } else if (t.dp > 1) {
    // Eager DP ranks pad to the widest rank (vllm/v1/worker/dp_utils.py, _post_process_dp_padding).
    c.padding = {PaddingMode::dp_max, {}};
  }
  // Without expert parallelism a DP rank's MoE layer sees the gathered batch (naive dispatch);
  // with one DP rank there is no DP metadata (layout contract 5).
  c.path = t.dp > 1 ? Path::gathered : Path::single;
  if (!validate(c).ok() || !check_profile(c, Profile::of(engine(), 0)).ok()) return std::nullopt;
  return c;
}

}  // namespace r3::vllm
