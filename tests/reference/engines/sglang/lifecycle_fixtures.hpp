// Small SGLang traces for the lifecycle tests, written out in C++: a request, a work, an event,
// and a run of one lifecycle version under the identity capture.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/lifecycle.hpp"
#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"
#include "tests/reference/trace/example_trace.hpp"

namespace r3::test {

// A one-rank SGLang trace of a 2-layer top-2 16-expert model: budget 8, page 1, 64 KV slots.
inline Trace sglang_trace(int page = 1, int64_t kv_slots = 64) {
  Trace t;
  t.engine = sglang::engine();
  t.model = ModelShape{2, 2, 16};
  t.config.page = page;
  t.config.kv_slots = kv_slots;
  return t;
}

inline TraceEvent weights(int version, bool flush) {
  TraceEvent e{TraceEvent::Kind::weight_update};
  e.version = version;
  e.flush = flush;
  return e;
}

inline TraceStep step(std::vector<Work> run, std::vector<TraceEvent> events = {}) {
  return TraceStep{std::move(events), std::move(run)};
}

inline RouteRef route(int req, int64_t pos, int version = 0) {
  return RouteRef{RouteRef::Kind::route, req, pos, version};
}
inline RouteRef draft(int req, int64_t pos, int version = 0) {
  return RouteRef{RouteRef::Kind::draft, req, pos, version};
}
inline const RouteRef kNeverWritten{};

// The trace's timeline after every SGLang rule (build_timeline, check, check_profile for sglang).
inline Timeline checked_timeline(const Trace& t) {
  Result<Timeline> timeline = validate_trace(t);
  EXPECT_TRUE(timeline.ok()) << (timeline.ok() ? "" : timeline.error().message);
  if (!timeline.ok()) return {};
  const Status runs = sglang::lifecycle_model().check_profile(t, *timeline, Profile::of(sglang::engine(), 0));
  EXPECT_TRUE(runs.ok()) << (runs.ok() ? "" : runs.error().message);
  return *timeline;
}

inline std::vector<StepDelivery> identity_deliveries(const Timeline& timeline) {
  std::vector<StepDelivery> out;
  for (const StepView& s : timeline.steps) out.push_back(identity_delivery(s));
  return out;
}

inline LifecycleOutcome run_version(const Trace& t, std::string_view version, std::vector<int> applied = {}) {
  const Timeline timeline = checked_timeline(t);
  return sglang::lifecycle_model().run(t, timeline, identity_deliveries(timeline), version, applied);
}

// The index of the patch named `name` (-1 when none is).
inline int patch_index(std::string_view name) {
  const auto patches = sglang::lifecycle_model().patches();
  for (size_t i = 0; i < patches.size(); ++i)
    if (patches[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace r3::test

namespace r3 {
inline void PrintTo(const RouteRef& r, std::ostream* os) { *os << describe(r); }
}  // namespace r3

// A request's answer: returned, with exactly these rows.
#define EXPECT_RETURNS(got, ...)                                       \
  do {                                                                 \
    EXPECT_EQ((got).status, ::r3::RequestRoutes::Status::returned);    \
    EXPECT_EQ((got).rows, (std::vector<::r3::RouteRef>{__VA_ARGS__})); \
  } while (0)

namespace r3::test {

// Every request answers the truth: its expected rows when it returns output, none otherwise.
inline void expect_truth(const Trace& t, const LifecycleOutcome& out) {
  const Timeline timeline = checked_timeline(t);
  EXPECT_FALSE(out.crash_step.has_value()) << out.crash;
  ASSERT_EQ(out.requests.size(), timeline.requests.size());
  for (size_t r = 0; r < timeline.requests.size(); ++r) {
    SCOPED_TRACE("request " + std::to_string(r));
    const RequestView& v = timeline.requests[r];
    if (v.finish_step < 0) {
      EXPECT_EQ(out.requests[r].status, RequestRoutes::Status::not_finished);
    } else if (!v.returns_output) {
      EXPECT_EQ(out.requests[r].status, RequestRoutes::Status::none);
    } else {
      EXPECT_EQ(out.requests[r].status, RequestRoutes::Status::returned);
      EXPECT_EQ(out.requests[r].rows, v.expected);
    }
  }
}

}  // namespace r3::test
