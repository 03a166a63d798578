// TensorRT-LLM traces as C++ values, and running them through its lifecycle model with each
// step's capture delivered as itself: the fixtures of the trtllm lifecycle tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "reference/engines/trtllm/lifecycle.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"
#include "tests/reference/trace/example_trace.hpp"

namespace r3::test::trtllm_trace {

using test::decode;
using test::extend;
using test::hit;
using test::on;
using test::request;
using test::weight_update;

inline Profile profile() { return Profile::of(trtllm::engine(), 0); }

// One DP rank, prefix caching on, no overlap, no CUDA graphs.
inline Trace trtllm_trace(std::vector<TraceRequest> requests, std::vector<TraceStep> steps) {
  Trace t;
  t.engine = trtllm::engine();
  t.profile = profile();
  t.model = {1, 2, 16};
  t.config.token_budget = 8;
  t.config.kv_slots = 64;
  t.config.prefix_cache = true;
  t.requests = std::move(requests);
  t.steps = std::move(steps);
  return t;
}

inline RouteRef route(int req, int64_t pos, int version = 0) { return {RouteRef::Kind::route, req, pos, version}; }
inline std::vector<RouteRef> own(int req, int64_t lo, int64_t hi, int version = 0) {
  std::vector<RouteRef> out;
  for (int64_t p = lo; p < hi; ++p) out.push_back(route(req, p, version));
  return out;
}
inline std::vector<RouteRef> cat(std::vector<RouteRef> a, const std::vector<RouteRef>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline const LifecycleModel& model() { return trtllm::lifecycle_model(); }

inline Timeline timeline_of(const Trace& t) {
  Result<Timeline> timeline = validate_trace(t);
  EXPECT_TRUE(timeline.ok()) << timeline.error().message;
  return timeline.ok() ? *timeline : Timeline{};
}

inline std::string profile_error(const Trace& t) {
  Result<Timeline> timeline = validate_trace(t);
  if (!timeline.ok()) return "invalid: " + timeline.error().message;
  const Status s = model().check_profile(t, *timeline, profile());
  return s.ok() ? "runs" : s.error().message;
}

inline LifecycleOutcome run(const Trace& t, std::string_view version, std::vector<int> applied = {}) {
  const Timeline timeline = timeline_of(t);
  std::vector<StepDelivery> delivery;
  for (const StepView& step : timeline.steps) delivery.push_back(identity_delivery(step));
  return model().run(t, timeline, delivery, version, applied);
}

inline std::vector<RouteRef> rows_of(const LifecycleOutcome& out, int req) {
  EXPECT_FALSE(out.crash_step.has_value()) << out.crash;
  EXPECT_EQ(out.requests.at(static_cast<size_t>(req)).status, RequestRoutes::Status::returned);
  return out.requests.at(static_cast<size_t>(req)).rows;
}

inline std::vector<RouteRef> expected_of(const Trace& t, int req) {
  return timeline_of(t).requests.at(static_cast<size_t>(req)).expected;
}

inline constexpr std::string_view kE = "trtllm-06a976ce";
inline constexpr std::string_view kL = "trtllm";
inline constexpr std::string_view kFixed = "trtllm-fixed";

}  // namespace r3::test::trtllm_trace
