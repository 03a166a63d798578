// SGLang's copy to host (reference/engines/sglang/lifecycle_copies.hpp; docs/lifecycle-contract.md
// S5 to S8): the window its streams allow, the exact rows upstream returns when a copy lands after
// the next forward, and the fixed model clean under every completion order in the window.
#include "reference/engines/sglang/lifecycle_copies.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "reference/engines/sglang/lifecycle.hpp"
#include "reference/engines/sglang/lifecycle_knobs.hpp"
#include "tests/reference/engines/sglang/lifecycle_fixtures.hpp"

namespace r3::test {
namespace {

// Three forwards: step 0 request 0's prompt (3 rows), step 1 request 1's prompt (2 rows), step 2
// request 0's decode (1 row). Request 1 ends at step 1, request 0 at step 2.
Trace overlap_trace(std::vector<CopyCompletion> copies) {
  Trace t = sglang_trace();
  t.config.overlap = true;
  t.requests = {request(0, {1, 2, 3}, {4, 5}), request(1, {6, 7}, {8})};
  t.steps = {step({extend(0, 0, 3)}), step({extend(1, 0, 2)}), step({decode(0, 3)})};
  t.copies = std::move(copies);
  return t;
}

std::string profile_error(const Trace& t) {
  const Result<Timeline> timeline = validate_trace(t);
  if (!timeline.ok()) return timeline.error().message;
  const Status s = sglang::lifecycle_model().check_profile(t, *timeline, Profile::of(sglang::engine(), 0));
  return s.ok() ? "ok" : s.error().message;
}

TEST(SglangCopies, OverlapLetsACopyLandOneForwardLate) {
  const Trace t = overlap_trace({});
  EXPECT_EQ(sglang::copy_window(t, checked_timeline(t)).latest, (std::vector<int>{2, 3, 3}));
  Trace sync = t;
  sync.config.overlap = false;
  EXPECT_EQ(sglang::copy_window(sync, checked_timeline(sync)).latest, (std::vector<int>{1, 2, 3}));
}

TEST(SglangCopies, CheckProfileRefusesAnOrderTheStreamsNeverAllow) {
  EXPECT_EQ(profile_error(overlap_trace({{0, 2}, {1, 3}})), "ok");
  EXPECT_EQ(profile_error(overlap_trace({{0, 3}})),
            "copies[0].done_before_step: 3 is past what step 0's copy allows (at most 2): SGLang's overlap scheduler "
            "synchronizes a step's copy_done in finalize, in that step's result processing, which runs after the next "
            "forward is launched and before the one after it (managers/scheduler.py, event_loop_overlap; "
            "batch_result_processor.py, process_batch_result_prefill and process_batch_result_decode @ 30cb848)");
  Trace sync = overlap_trace({{0, 2}});
  sync.config.overlap = false;
  EXPECT_EQ(profile_error(sync),
            "copies[0].done_before_step: 2 is past what step 0's copy allows (at most 1, in order): SGLang without the "
            "overlap scheduler copies inline in on_forward_end (state_capturer/base.py @ 30cb848), so every copy lands "
            "in order");
}

// Step 0's copy lands after step 1's forward: its three rows read step 1's two rows over their
// first two (S8); request 1's own rows, copied in order, are right.
TEST(SglangCopies, ALateCopyReadsTheNextForwardsRowsInUpstream) {
  const Trace t = overlap_trace({{0, 2}});
  for (const char* v : {"sglang", "sglang-miles"}) {
    SCOPED_TRACE(v);
    const LifecycleOutcome out = run_version(t, v);
    EXPECT_RETURNS(out.requests[0], route(1, 0), route(1, 1), route(0, 2), route(0, 3));
    EXPECT_RETURNS(out.requests[1], route(1, 0), route(1, 1));
  }
  expect_truth(t, run_version(t, "sglang-fixed"));
  expect_truth(t, run_version(t, "sglang", {patch_index("overlap-copy-race")}));
}

// Step 1's copy lands late too: request 1's first row reads step 2's decode row.
TEST(SglangCopies, EveryLateCopyIsTheOlderKnob) {
  const Trace t = overlap_trace({{0, 2}, {1, 3}});
  const LifecycleOutcome out = run_version(t, "sglang");
  EXPECT_RETURNS(out.requests[0], route(1, 0), route(1, 1), route(0, 2), route(0, 3));
  EXPECT_RETURNS(out.requests[1], route(0, 3), route(1, 1));
  Trace knob = overlap_trace({});
  knob.knobs = {{"config.overlap_copy_race", "true"}};
  const LifecycleOutcome by_knob = run_version(knob, "sglang");
  EXPECT_EQ(by_knob.requests[0].rows, out.requests[0].rows);
  EXPECT_EQ(by_knob.requests[1].rows, out.requests[1].rows);
  EXPECT_EQ(sglang::copy_completions(knob, sglang::knobs_of(knob)), (std::vector<int>{2, 3, 3}));
  // The record wins over the knob for the steps it names.
  knob.copies = {{1, 3}};
  EXPECT_EQ(sglang::copy_completions(knob, sglang::knobs_of(knob)), (std::vector<int>{2, 3, 3}));
  EXPECT_EQ(sglang::copy_completions(overlap_trace({{1, 3}}), {}), (std::vector<int>{1, 3, 3}));
}

// In order, upstream is right.
TEST(SglangCopies, InOrderUpstreamIsRight) { expect_truth(overlap_trace({}), run_version(overlap_trace({}), "sglang")); }

// Every record the window allows, for a few traces: the fixed model returns the truth each time,
// and upstream fails exactly when some late copy is followed by a forward with rows.
TEST(SglangCopies, TheFixedModelIsCleanUnderEveryCompletionOrder) {
  std::vector<Trace> traces = {overlap_trace({})};
  Trace paged = overlap_trace({});
  paged.config.page = 2;
  paged.config.cuda_graph_decode = {2, 4};
  traces.push_back(paged);
  Trace longer = sglang_trace();
  longer.config.overlap = true;
  longer.config.prefix_cache = true;
  longer.requests = {request(0, {1, 2}, {3, 4, 5}), request(1, {1, 2, 6}, {7, 8})};
  longer.steps = {step({extend(0, 0, 2)}), step({decode(0, 2)}), step({extend(1, 2, 3)}, {hit(1, 2)}),
                  step({decode(0, 3), decode(1, 3)})};
  traces.push_back(longer);
  int orders = 0;
  for (const Trace& base : traces) {
    const Timeline timeline = checked_timeline(base);
    const CopyWindow window = sglang::copy_window(base, timeline);
    std::function<void(Trace&, size_t)> each = [&](Trace& t, size_t s) {
      if (s == t.steps.size()) {
        ++orders;
        SCOPED_TRACE("copies " + std::to_string(t.copies.size()));
        ASSERT_EQ(profile_error(t), "ok");
        expect_truth(t, run_version(t, "sglang-fixed"));
        return;
      }
      each(t, s + 1);
      for (int d = static_cast<int>(s) + 2; d <= window.latest[s]; ++d) {
        t.copies.push_back({static_cast<int>(s), d});
        each(t, s + 1);
        t.copies.pop_back();
      }
    };
    Trace t = base;
    each(t, 0);
  }
  EXPECT_EQ(orders, 4 + 4 + 8);
}

}  // namespace
}  // namespace r3::test
