// vLLM's copy to host (reference/engines/vllm/lifecycle_copies.hpp; docs/lifecycle-contract.md 2.3,
// "Copy to host"): the window its streams allow, and that no completion order inside it changes
// what any version returns (the staging snapshot and the in-order, waiting consumption), on a
// written trace and on every drawn vLLM trace with async scheduling.
#include "reference/engines/vllm/lifecycle_copies.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "fuzz/generate/rng.hpp"
#include "fuzz/generate/trace_generator.hpp"
#include "tests/reference/engines/vllm/lifecycle_fixtures.hpp"

namespace r3 {
namespace {

using namespace test::vllm_trace;

// Async scheduling; request 0 ends at step 1 on eos (its lagging decode runs at step 2), request
// 1 at step 2.
Trace async_trace(std::vector<CopyCompletion> copies) {
  Trace t = vllm_trace({request(0, {1, 2, 3}, {4, 5}, Finish::eos), request(1, {9, 9, 9}, {1, 2, 3})},
                       {{{}, {extend(0, 0, 3), extend(1, 0, 3)}},
                        {{}, {decode(0, 3), decode(1, 3)}},
                        {{}, {decode(0, 4), decode(1, 4)}}});
  t.requests[0].max_new = 4;
  t.config.overlap = true;
  t.copies = std::move(copies);
  return t;
}

TEST(VllmCopies, AsyncSchedulingLetsACopyLandOneForwardLate) {
  const Trace t = async_trace({});
  EXPECT_EQ(vllm::copy_window(t, timeline_of(t), main_profile()).latest, (std::vector<int>{2, 3, 3}));
  EXPECT_EQ(vllm::copy_window(t, timeline_of(t), legacy_profile()).latest, (std::vector<int>{1, 2, 3}));
  Trace sync = t;
  sync.config.overlap = false;
  sync.requests[0].max_new.reset();
  sync.requests[0].finish = Finish::length;
  sync.steps[2].run.erase(sync.steps[2].run.begin());
  EXPECT_EQ(vllm::copy_window(sync, timeline_of(sync), main_profile()).latest, (std::vector<int>{1, 2, 3}));
}

TEST(VllmCopies, CheckProfileRefusesAnOrderTheStreamsNeverAllow) {
  EXPECT_EQ(profile_error(async_trace({{0, 2}, {1, 3}}), main_profile()), "runs");
  EXPECT_EQ(profile_error(async_trace({{0, 3}}), main_profile()),
            "copies[0].done_before_step: 3 is past what step 0's copy allows (at most 2): vLLM with async scheduling "
            "consumes a step's output, waiting for its copy, before it applies the metadata of the step after the "
            "next (worker.py, prepare_output and begin_step @ f99d53b)");
  EXPECT_EQ(profile_error(async_trace({{0, 3}}), Profile::any()),
            profile_error(async_trace({{0, 3}}), main_profile()));
  EXPECT_EQ(profile_error(async_trace({{0, 2}}), legacy_profile()),
            "copies[0].done_before_step: 2 is past what step 0's copy allows (at most 1, in order): vLLM releases "
            "before the AuxOutput connector (profile vllm-legacy): the lifecycle contract does not describe their copy "
            "to host, so no late completion is claimed");
}

// Both copies late: every version still returns each request's own rows.
TEST(VllmCopies, LateCopiesReturnTheSameRowsInEveryVersion) {
  const Trace t = async_trace({{0, 2}, {1, 3}});
  for (const char* v : {"vllm-50874", "vllm-pre-50874", "r3-fixed"}) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run(t, v);
    EXPECT_EQ(rows_of(out, 0), own(0, 0, 4));
    EXPECT_EQ(rows_of(out, 1), own(1, 0, 5));
  }
}

std::string rows_text(const LifecycleOutcome& out) {
  std::string s = out.crash;
  for (const RequestRoutes& r : out.requests) {
    s += "|" + std::to_string(static_cast<int>(r.status)) + ":";
    for (const RouteRef& ref : r.rows) s += describe(ref) + ";";
  }
  return s;
}

// Every drawn vLLM trace with async scheduling inside profile vllm, under every completion order
// of its first six late-able steps (the rest in order): vllm-50874 and r3-fixed return what they
// return in order, and r3-fixed the truth.
TEST(VllmCopies, NoCompletionOrderInTheWindowChangesWhatAnyVersionReturns) {
  int traces = 0, orders = 0;
  for (uint64_t seed = 1; seed <= 400 && traces < 40; ++seed) {
    Rng rng(seed);
    Result<Trace> drawn = draw_trace(rng, main_profile());
    if (!drawn.ok() || !drawn->config.overlap) continue;
    Trace t = *drawn;
    t.copies.clear();
    const Timeline timeline = timeline_of(t);
    const CopyWindow window = vllm::copy_window(t, timeline, main_profile());
    std::vector<int> late;
    for (size_t s = 0; s < window.latest.size() && late.size() < 6; ++s)
      if (window.latest[s] > static_cast<int>(s) + 1) late.push_back(static_cast<int>(s));
    std::vector<StepDelivery> delivery;
    for (const StepView& step : timeline.steps) delivery.push_back(identity_delivery(step));
    const std::string main_in_order = rows_text(model().run(t, timeline, delivery, "vllm-50874", {}));
    const std::string fixed_in_order = rows_text(model().run(t, timeline, delivery, "r3-fixed", {}));
    ++traces;
    for (uint32_t mask = 1; mask < (1u << late.size()); ++mask) {
      Trace c = t;
      for (size_t i = 0; i < late.size(); ++i)
        if (mask & (1u << i)) c.copies.push_back({late[i], late[i] + 2});
      ASSERT_EQ(profile_error(c, main_profile()), "runs") << "seed " << seed;
      ++orders;
      EXPECT_EQ(rows_text(model().run(c, timeline, delivery, "vllm-50874", {})), main_in_order) << "seed " << seed;
      const LifecycleOutcome fixed = model().run(c, timeline, delivery, "r3-fixed", {});
      EXPECT_EQ(rows_text(fixed), fixed_in_order) << "seed " << seed;
      for (size_t r = 0; r < timeline.requests.size(); ++r) {
        if (!timeline.requests[r].returns_output) continue;
        const std::vector<RouteRef>& got = fixed.requests[r].rows;
        const std::vector<RouteRef>& want = timeline.requests[r].expected;
        ASSERT_EQ(got.size(), want.size()) << "seed " << seed << " request " << r;
        for (size_t i = 0; i < got.size(); ++i)
          EXPECT_TRUE(timeline.same_route(got[i], want[i])) << "seed " << seed << " request " << r << " row " << i;
      }
    }
  }
  EXPECT_GE(traces, 20);
  EXPECT_GE(orders, 100);
}

}  // namespace
}  // namespace r3
