// vLLM traces as C++ values, and running them through vLLM's lifecycle model with each step's
// capture delivered as itself: the fixtures of the vLLM lifecycle tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "reference/engines/vllm/lifecycle.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"
#include "tests/reference/trace/example_trace.hpp"

namespace r3::test::vllm_trace {

using test::decode;
using test::extend;
using test::hit;
using test::on;
using test::request;
using test::verify;
using test::weight_update;

// One DP rank, page 2, prefix caching on (vLLM main requires it), no connector.
inline Trace vllm_trace(std::vector<TraceRequest> requests, std::vector<TraceStep> steps) {
  Trace t;
  t.engine = vllm::engine();
  t.profile = Profile::of(vllm::engine(), 0);
  t.model = {1, 2, 16};
  t.config.token_budget = 8;
  t.config.page = 2;
  t.config.kv_slots = 64;
  t.config.prefix_cache = true;
  t.requests = std::move(requests);
  t.steps = std::move(steps);
  return t;
}

inline Profile main_profile() { return Profile::of(vllm::engine(), 0); }    // vllm
inline Profile legacy_profile() { return Profile::of(vllm::engine(), 1); }  // vllm-legacy

inline RouteRef route(int req, int64_t pos, int version = 0) { return {RouteRef::Kind::route, req, pos, version}; }
inline RouteRef zeros() { return {}; }
// Request `req`'s own rows [lo, hi) at `version`.
inline std::vector<RouteRef> own(int req, int64_t lo, int64_t hi, int version = 0) {
  std::vector<RouteRef> out;
  for (int64_t p = lo; p < hi; ++p) out.push_back(route(req, p, version));
  return out;
}
inline std::vector<RouteRef> cat(std::vector<RouteRef> a, const std::vector<RouteRef>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline const LifecycleModel& model() { return vllm::lifecycle_model(); }

inline Timeline timeline_of(const Trace& t) {
  Result<Timeline> timeline = validate_trace(t);
  EXPECT_TRUE(timeline.ok()) << timeline.error().message;
  return timeline.ok() ? *timeline : Timeline{};
}

inline std::string profile_error(const Trace& t, Profile profile) {
  const Timeline timeline = timeline_of(t);
  const Status s = model().check_profile(t, timeline, profile);
  return s.ok() ? "runs" : s.error().message;
}

// Runs `version` (with `applied` patches) on `t`, every step's capture delivered as itself.
inline LifecycleOutcome run(const Trace& t, std::string_view version, std::vector<int> applied = {}) {
  const Timeline timeline = timeline_of(t);
  std::vector<StepDelivery> delivery;
  for (const StepView& step : timeline.steps) delivery.push_back(identity_delivery(step));
  return model().run(t, timeline, delivery, version, applied);
}

// The rows request `req` returned (failing the test unless it returned some).
inline std::vector<RouteRef> rows_of(const LifecycleOutcome& out, int req) {
  EXPECT_FALSE(out.crash_step.has_value()) << out.crash;
  EXPECT_EQ(out.requests.at(req).status, RequestRoutes::Status::returned);
  return out.requests.at(req).rows;
}

inline std::vector<RouteRef> expected_of(const Trace& t, int req) { return timeline_of(t).requests.at(req).expected; }

}  // namespace r3::test::vllm_trace
