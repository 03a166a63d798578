// Sources: SGLang upstream main (U) at 30cb848d4b455a288a37cfeb6a45aff34f5634a6 and sglang-miles (M)
// at c447264eba460045e6e961fd7cf1bfbaf038db6b, paths under python/sglang/srt/, as
// docs/lifecycle-contract.md S5 to S8 and the spec's section 5 cite them.
#include "reference/engines/sglang/lifecycle_copies.hpp"

#include <algorithm>
#include <cstddef>

namespace r3::sglang {

CopyWindow copy_window(const Trace& t, const Timeline& timeline) {
  if (!t.config.overlap) {
    // S5: without the overlap scheduler on_forward_end copies and scatters inline
    // (state_capturer/base.py, BaseTopkCapturer.on_forward_end @ U, M).
    return in_order_window(t, "SGLang without the overlap scheduler copies inline in on_forward_end "
                              "(state_capturer/base.py @ 30cb848), so every copy lands in order");
  }
  // S6, S7: the copy is issued after the forward on the copy stream (managers/utils.py,
  // GenerationBatchResult.copy_to_cpu) and finalize synchronizes copy_done in the step's result
  // processing (batch_result_processor.py, process_batch_result_prefill and _decode), which the
  // overlap event loop runs after it launched the next step's forward and before it forms the one
  // after (managers/scheduler.py, event_loop_overlap) @ U, M.
  CopyWindow w = lagging_window(
      t, 1,
      "SGLang's overlap scheduler synchronizes a step's copy_done in finalize, in that step's result processing, "
      "which runs after the next forward is launched and before the one after it (managers/scheduler.py, "
      "event_loop_overlap; batch_result_processor.py, process_batch_result_prefill and process_batch_result_decode "
      "@ 30cb848)");
  // S7: idle batches carry no rows (process_batch_result_idle), so nothing is copied.
  for (size_t n = 0; n < timeline.steps.size() && n < w.latest.size(); ++n) {
    const auto& rows = timeline.steps[n].rows;
    if (std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.empty(); }))
      w.latest[n] = static_cast<int>(n) + 1;
  }
  return w;
}

std::vector<int> copy_completions(const Trace& t, const LifecycleKnobs& knobs) {
  std::vector<int> out = completion_steps(t);
  if (!knobs.overlap_copy_race || !t.config.overlap) return out;
  std::vector<bool> recorded(out.size(), false);
  for (const CopyCompletion& c : t.copies)
    if (c.step >= 0 && static_cast<size_t>(c.step) < out.size()) recorded[static_cast<size_t>(c.step)] = true;
  const int steps = static_cast<int>(out.size());
  for (int s = 0; s < steps; ++s)
    if (!recorded[static_cast<size_t>(s)]) out[static_cast<size_t>(s)] = std::min(s + 2, steps);
  return out;
}

}  // namespace r3::sglang
