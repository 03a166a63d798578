// Small hand-written vllm-ascend cases for unit tests: one call names the topology, the chip and
// the counts; the rest defaults to a 2-layer, top-2, 64-expert model at layer 0, M = 16, eager V1,
// every DP rank's idle dummy on (as the profiles want with dp > 1).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "reference/capture.hpp"
#include "reference/capturer.hpp"
#include "reference/case.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3::test {

inline Case ascend_case(int dp, int tp, bool ep, bool sp, std::vector<int64_t> tokens,
                        ascend::Chip chip = ascend::Chip::a3, ascend::Runner runner = ascend::Runner::v1) {
  Case c;
  c.engine = ascend::engine();
  c.topology = {dp, tp, ep, sp};
  c.model = {2, 2, 64};
  c.max_num_tokens = 16;
  c.tokens = std::move(tokens);
  c.idle_dummy = dp > 1;
  if (sp && runner == ascend::Runner::v1) c.padding.mode = PaddingMode::dp_max;
  ascend::Fields f;
  f.chip = chip;
  f.runner = runner;
  c.engine_fields.emplace<ascend::Fields>(f);
  return c;
}

// Rank (dp, tp)'s decision in the step's one call.
inline CaptureDecision ascend_decision(const CapturePolicy& policy, const Case& c, const Step& step, int dp, int tp) {
  const BufferShape shape{policy.allocate(c).capture_rows, c.model.layers, c.model.top_k};
  CaptureDecision out;
  policy.decide(capture_call_for(step, step.calls.front(), step.calls.front().view(dp, tp), shape), out);
  return out;
}

}  // namespace r3::test
