// TensorRT-LLM's rules for a trace (reference/engines/trtllm/lifecycle_check.cpp): its knobs,
// what the model leaves out, and its start-up refusals, with their exact texts.
#include <gtest/gtest.h>

#include "tests/reference/engines/trtllm/lifecycle_fixtures.hpp"

namespace r3 {
namespace {

using namespace test::trtllm_trace;

Trace simple() { return trtllm_trace({request(0, {1, 2}, {3, 4})}, {{{}, {extend(0, 0, 2)}}, {{}, {decode(0, 2)}}}); }

std::string invalid(const Trace& t) {
  Result<Timeline> timeline = validate_trace(t);
  return timeline.ok() ? "valid" : timeline.error().message;
}

TEST(TrtllmCheck, ASimpleTraceRuns) { EXPECT_EQ(profile_error(simple()), "runs"); }

TEST(TrtllmCheck, StartUpRefusesPipelineParallelism) {
  Trace t = simple();
  t.knobs["topology.pp"] = "2";
  EXPECT_EQ(profile_error(t),
            "knobs.topology.pp: TensorRT-LLM refuses route capture with pipeline parallelism (pp 2) at start-up "
            "(route_capture.py: RouteCapture.create @ 06a976ce, aa94b01) under profile trtllm");
  t.knobs["topology.pp"] = "1";
  EXPECT_EQ(profile_error(t), "runs");
}

TEST(TrtllmCheck, StartUpRefusesSpeculativeDecoding) {
  Trace t = simple();
  t.config.spec = SpecConfig{2, false};
  EXPECT_EQ(profile_error(t),
            "config.spec: TensorRT-LLM refuses route capture with speculative decoding or MTP at start-up "
            "(route_capture.py: RouteCapture.create @ 06a976ce, aa94b01) under profile trtllm");
}

TEST(TrtllmCheck, StartUpRefusesFusedRoutingBackends) {
  Trace t = simple();
  t.knobs["config.moe_backend"] = "\"trtllmgen\"";
  EXPECT_EQ(profile_error(t),
            "knobs.config.moe_backend: TensorRT-LLM refuses route capture on a fused-routing MoE backend "
            "(\"trtllmgen\": top-k inside the kernel) at start-up (route_capture.py: assert_capturable @ 06a976ce, "
            "aa94b01) under profile trtllm");
  t.knobs["config.moe_backend"] = "\"deepgemm\"";
  EXPECT_EQ(profile_error(t), "runs");
}

TEST(TrtllmCheck, KnobsAreChecked) {
  Trace t = simple();
  t.knobs["config.hicache"] = "true";
  EXPECT_EQ(invalid(t), "knobs: \"config.hicache\" is not a trtllm knob (known: topology.pp, config.moe_backend)");
  t = simple();
  t.knobs["config.moe_backend"] = "\"triton\"";
  EXPECT_EQ(invalid(t), "knobs.config.moe_backend: \"triton\" is not one of cutlass, deepgemm, trtllmgen (a JSON string)");
  t = simple();
  t.knobs["topology.pp"] = "0";
  EXPECT_EQ(invalid(t), "knobs.topology.pp: 0 is not a pipeline-parallel size (an integer from 1 to 9999)");
}

TEST(TrtllmCheck, RoutesAlwaysStartAtZero) {
  Trace t = simple();
  t.requests[0].start_len = 1;
  EXPECT_EQ(profile_error(t),
            "requests[0].start_len: 1, but TensorRT-LLM's routes always start at position 0 "
            "(RouteCapture.assemble @ 06a976ce, aa94b01) under profile trtllm");
}

TEST(TrtllmCheck, ContextRowsComeFirst) {
  const Trace t = trtllm_trace({request(0, {1, 2}, {3, 4}), request(1, {5}, {6})},
                               {{{}, {extend(0, 0, 2)}}, {{}, {decode(0, 2), extend(1, 0, 1)}}});
  EXPECT_EQ(profile_error(t),
            "steps[1].run[1]: request 1 extends after a decode; TensorRT-LLM forwards context requests before "
            "generation requests (RouteCapture._prepare @ 06a976ce, aa94b01) under profile trtllm");
}

TEST(TrtllmCheck, PhasesFollowTheScheduler) {
  const Trace extend_while_generating =
      trtllm_trace({request(0, {1, 2}, {3, 4, 5})}, {{{}, {extend(0, 0, 2)}}, {{}, {extend(0, 2, 3)}}});
  EXPECT_EQ(profile_error(extend_while_generating),
            "steps[1].run[0]: request 0 extends in its generation phase; TensorRT-LLM forwards a generating request "
            "one decode row a step and sends it back to a context forward only after evicting its KV (a preempt "
            "event; RouteCapture._prepare @ 06a976ce, aa94b01) under profile trtllm");
  const Trace decode_after_eviction =
      trtllm_trace({request(0, {1, 2}, {3, 4, 5})},
                   {{{}, {extend(0, 0, 2)}}, {{on(TraceEvent::Kind::preempt, 0), hit(0, 2)}, {decode(0, 2)}}});
  EXPECT_EQ(profile_error(decode_after_eviction),
            "steps[1].run[0]: request 0 decodes before a context forward sampled its last token; TensorRT-LLM "
            "schedules a new or evicted request as a context request first, whatever its KV reuse covers "
            "(RouteCapture._prepare @ 06a976ce, aa94b01) under profile trtllm");
}

TEST(TrtllmCheck, WhatTheModelLeavesOut) {
  Trace t = simple();
  t.dp = 2;
  EXPECT_EQ(invalid(t),
            "topology.dp: 2 DP ranks; the trtllm model covers one (attention DP's capture rows were not read: "
            "docs/lifecycle-contract.md 2.5)");
  t = trtllm_trace({request(0, {1, 2}, {3, 4, 5})},
                   {{{}, {extend(0, 0, 2)}}, {{on(TraceEvent::Kind::offload, 0)}, {}}, {{on(TraceEvent::Kind::restore, 0)}, {decode(0, 2)}}});
  EXPECT_EQ(invalid(t),
            "steps[1].events[0]: offload is not modelled for trtllm (route_capture.py has no KV offload or P/D "
            "handling: docs/lifecycle-contract.md 2.5)");
}

}  // namespace
}  // namespace r3
