// The lifecycle faults (fuzz/oracle/lifecycle_fault.hpp), the copy-order ones in particular: the
// exact rows each makes a fixed model return under a given completion order of the copies.
#include "fuzz/oracle/lifecycle_fault.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fuzz/oracle/judge_trace.hpp"
#include "tests/reference/engines/sglang/lifecycle_fixtures.hpp"

namespace r3::test {
namespace {

// Overlap scheduling; step 0 forwards request 0's prompt (3 rows), step 1 request 1's (2 rows),
// step 2 request 0's decode. Request 1 ends at step 1, request 0 at step 2.
Trace overlap_trace(std::vector<CopyCompletion> copies) {
  Trace t = sglang_trace();
  t.config.overlap = true;
  t.requests = {request(0, {1, 2, 3}, {4, 5}), request(1, {6, 7}, {8})};
  t.steps = {step({extend(0, 0, 3)}), step({extend(1, 0, 2)}), step({decode(0, 3)})};
  t.copies = std::move(copies);
  return t;
}

LifecycleOutcome fixed_with(LifecycleFault f, const Trace& t) {
  const Timeline timeline = checked_timeline(t);
  LifecycleOutcome out = run_version(t, "sglang-fixed");
  apply_lifecycle_fault(f, t, timeline, out);
  return out;
}

TEST(LifecycleFault, NamesParseAndTheCopyFaultsAreTheirOwnGroup) {
  EXPECT_EQ(all_lifecycle_faults().size(), 5u);
  ASSERT_EQ(all_copy_faults().size(), 3u);
  std::vector<std::string> names;
  for (const LifecycleFault f : all_copy_faults()) {
    names.emplace_back(to_string(f));
    EXPECT_TRUE(is_copy_fault(f));
    EXPECT_EQ(parse_lifecycle_fault(to_string(f)).value(), f);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"copy-reads-next-forward", "copy-not-awaited", "prefill-never-committed"}));
  EXPECT_FALSE(is_copy_fault(LifecycleFault::shift_one));
  EXPECT_EQ(parse_lifecycle_fault("no-clone").error().message,
            "\"no-clone\" is not a lifecycle fault; they are shift-one, drop-last, preempted-freed, hit-before-store, "
            "version-not-tracked, copy-reads-next-forward, copy-not-awaited, prefill-never-committed");
}

// Step 0's copy lands after step 1's forward: its rows read step 1's over their first two (what
// SGLang upstream does, S8); in order the fault changes nothing.
TEST(LifecycleFault, CopyReadsNextForwardTakesTheNextForwardsRows) {
  const LifecycleOutcome late = fixed_with(LifecycleFault::copy_reads_next_forward, overlap_trace({{0, 2}}));
  EXPECT_RETURNS(late.requests[0], route(1, 0), route(1, 1), route(0, 2), route(0, 3));
  EXPECT_RETURNS(late.requests[1], route(1, 0), route(1, 1));
  const LifecycleOutcome both = fixed_with(LifecycleFault::copy_reads_next_forward, overlap_trace({{0, 2}, {1, 3}}));
  EXPECT_RETURNS(both.requests[1], route(0, 3), route(1, 1));
  const Trace calm = overlap_trace({});
  expect_truth(calm, fixed_with(LifecycleFault::copy_reads_next_forward, calm));
}

// Step 1's copy lands after step 2's forward, but request 1 is read at step 1's end: a read that
// does not wait finds nothing there.
TEST(LifecycleFault, CopyNotAwaitedReadsZerosForACopyStillInFlight) {
  const LifecycleOutcome late = fixed_with(LifecycleFault::copy_not_awaited, overlap_trace({{1, 3}}));
  EXPECT_RETURNS(late.requests[0], route(0, 0), route(0, 1), route(0, 2), route(0, 3));
  EXPECT_RETURNS(late.requests[1], kNeverWritten, kNeverWritten);
  // Step 0's copy lands before step 2's forward, so before request 0's read at step 2.
  const Trace early = overlap_trace({{0, 2}});
  expect_truth(early, fixed_with(LifecycleFault::copy_not_awaited, early));
}

TEST(LifecycleFault, PrefillNeverCommittedZerosTheRowsOfExtendOnlySteps) {
  const LifecycleOutcome out = fixed_with(LifecycleFault::prefill_never_committed, overlap_trace({}));
  EXPECT_RETURNS(out.requests[0], kNeverWritten, kNeverWritten, kNeverWritten, route(0, 3));
  EXPECT_RETURNS(out.requests[1], kNeverWritten, kNeverWritten);
}

// The judge applies the fault to the implementation's outcome.
TEST(LifecycleFault, TheJudgeShowsACopyFaultOnTheFixedModel) {
  Result<TraceImplementation> impl = make_trace_implementation("sglang-fixed");
  ASSERT_TRUE(impl.ok());
  impl->fault = LifecycleFault::copy_reads_next_forward;
  const Trace t = overlap_trace({{0, 2}});
  const TraceJudgement j = judge_trace(*impl, t, checked_timeline(t));
  EXPECT_EQ(j.verdict, TraceVerdict::wrong_route);
  EXPECT_EQ(j.detail,
            "request 0 position 0 holds the route of request 1 position 0 at weight version 0, expected the route of "
            "request 0 position 0 at weight version 0");
}

}  // namespace
}  // namespace r3::test
