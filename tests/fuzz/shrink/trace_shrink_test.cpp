#include "fuzz/shrink/trace_shrink.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/codec/trace_json.hpp"
#include "fuzz/oracle/judge_trace.hpp"
#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"
#include "tests/reference/trace/example_trace.hpp"

namespace r3 {
namespace {

using test::decode;
using test::example_trace;
using test::extend;
using test::hit;

TraceRequest request(int id, int dp, std::vector<int32_t> prompt, std::vector<int32_t> outputs,
                     Finish finish = Finish::length, std::optional<int64_t> max_new = std::nullopt) {
  TraceRequest r;
  r.id = id;
  r.dp = dp;
  r.prompt = std::move(prompt);
  r.outputs = std::move(outputs);
  r.finish = finish;
  r.max_new = max_new;
  return r;
}

Profile sglang_profile() { return parse_profile("sglang").value(); }

// The example requests and a fourth, scheduled the way SGLang batches them: at most
// config.chunk = 4 extend rows a batch, and extends and decodes in batches of their own.
Trace four_requests() {
  Trace t = example_trace();
  t.note = "four requests";
  t.requests.push_back(request(3, 0, {10, 11, 12}, {13, 14}));
  t.steps = {
      {{}, {extend(0, 0, 4)}},
      {{}, {extend(0, 4, 5), extend(2, 0, 2)}},
      {{hit(1, 4)}, {extend(1, 4, 6)}},
      {{}, {extend(3, 0, 3)}},
      {{}, {decode(0, 5), decode(3, 3)}},
      {{}, {decode(0, 6)}},
  };
  return t;
}

// Two DP ranks (DP attention), two requests on each.
Trace four_requests_on_two_ranks() {
  Trace t = example_trace();
  t.dp = 2;
  t.knobs["topology.dp_attention"] = "true";
  t.config.prefix_cache = false;
  t.config.chunk = -1;
  t.requests = {
      request(0, 0, {1, 2, 3}, {4, 5}),
      request(1, 1, {6, 7}, {8, 9}),
      request(2, 0, {1, 2, 3, 10}, {11}),
      request(3, 1, {12, 13, 14}, {15}, Finish::eos, 3),
  };
  t.steps = {
      {{}, {extend(0, 0, 3), extend(1, 0, 2), extend(2, 0, 4), extend(3, 0, 3)}},
      {{}, {decode(0, 3), decode(1, 2)}},
  };
  return t;
}

// The plain config and model every shrink below ends at: the example's, reduced.
Trace plain_trace(int dp) {
  Trace t;
  t.engine = parse_engine("sglang").value();
  t.profile = sglang_profile();
  t.dp = dp;
  t.model = {1, 1, 1};
  return t;
}

// The timeline of a candidate the shrinker shows the predicate; every one must be valid and
// inside the profile.
std::optional<Timeline> checked(const Trace& t, int& invalid) {
  Result<Timeline> timeline = validate_trace(t);
  if (!timeline || !lifecycle_of(t.engine)->check_profile(t, *timeline, sglang_profile()).ok()) {
    ++invalid;
    return std::nullopt;
  }
  return std::move(timeline).value();
}

// Why `t` is no candidate the shrinker may keep; empty when it is one.
std::string why_not(const Trace& t) {
  Result<Timeline> timeline = validate_trace(t);
  if (!timeline) return timeline.error().message;
  const Status inside = lifecycle_of(t.engine)->check_profile(t, *timeline, sglang_profile());
  return inside ? "" : inside.error().message;
}

// The traces as their JSON text first, so a failure shows the difference readably.
void expect_trace(const Trace& got, const Trace& want) {
  EXPECT_EQ(trace_to_json_text(got), trace_to_json_text(want));
  EXPECT_EQ(got, want);
}

// "Some request that took a prefix hit finishes."
bool hit_request_finishes(const Trace& t, const Timeline& timeline) {
  for (const TraceStep& s : t.steps)
    for (const TraceEvent& e : s.events)
      if (e.kind == TraceEvent::Kind::hit && timeline.requests[static_cast<size_t>(e.req)].finish_step >= 0)
        return true;
  return false;
}

// "A request keeps 3 outputs and finishes."
bool three_outputs_finish(const Trace&, const Timeline& timeline) {
  for (const RequestView& r : timeline.requests)
    if (r.kept_outputs == 3 && r.finish_step >= 0) return true;
  return false;
}

// "DP 2, and a request on DP rank 1 decodes."
bool rank_one_decodes(const Trace& t, const Timeline&) {
  if (t.dp != 2) return false;
  for (const TraceStep& s : t.steps)
    for (const Work& w : s.run)
      if (w.kind == Work::Kind::decode && t.requests[static_cast<size_t>(w.req)].dp == 1) return true;
  return false;
}

struct Shrunk {
  TraceShrinkResult result;
  int seen = 0;     // candidates the predicate saw
  int invalid = 0;  // of those, invalid ones (must stay 0)
};

Shrunk shrink(const Trace& t, bool (*holds)(const Trace&, const Timeline&), int max_attempts = 2000) {
  Shrunk out;
  out.result = shrink_trace(t, sglang_profile(), [&](const Trace& candidate) {
    ++out.seen;
    const std::optional<Timeline> timeline = checked(candidate, out.invalid);
    return timeline && holds(candidate, *timeline);
  }, max_attempts);
  return out;
}

TEST(TraceShrink, TheInputsAreValidAndFail) {
  int invalid = 0;
  const std::optional<Timeline> a = checked(four_requests(), invalid);
  ASSERT_TRUE(a) << why_not(four_requests());
  EXPECT_TRUE(hit_request_finishes(four_requests(), *a));
  EXPECT_TRUE(three_outputs_finish(four_requests(), *a));
  const std::optional<Timeline> b = checked(four_requests_on_two_ranks(), invalid);
  ASSERT_TRUE(b) << why_not(four_requests_on_two_ranks());
  EXPECT_TRUE(rank_one_decodes(four_requests_on_two_ranks(), *b));
}

// A hit needs a request that computed the prefix before it: two requests, two steps, and the
// hit one position long.
TEST(TraceShrink, AHitShrinksToItsSourceAndOneHitRequest) {
  const Shrunk s = shrink(four_requests(), hit_request_finishes);
  Trace want = plain_trace(1);
  want.config.prefix_cache = true;
  want.requests = {request(0, 0, {1}, {2}), request(1, 0, {1, 3}, {4})};
  want.steps = {{{}, {extend(0, 0, 1)}}, {{hit(1, 1)}, {extend(1, 1, 2)}}};
  expect_trace(s.result.trace, want);
  EXPECT_EQ(s.invalid, 0);
  EXPECT_GT(s.result.accepted, 0);
  EXPECT_LE(s.seen, s.result.attempts);
}

// Three outputs need three forwards: the prompt's and two decodes. TP and the layers go too.
TEST(TraceShrink, ThreeOutputsShrinkToOneRequestOfOneTokenAndTwoDecodes) {
  Trace t = four_requests();
  t.tp = 4;
  t.model.layers = 3;
  const Shrunk s = shrink(t, three_outputs_finish);
  Trace want = plain_trace(1);
  want.requests = {request(0, 0, {1}, {2, 3, 4})};
  want.steps = {{{}, {extend(0, 0, 1)}}, {{}, {decode(0, 1)}}, {{}, {decode(0, 2)}}};
  expect_trace(s.result.trace, want);
  EXPECT_EQ(s.invalid, 0);
}

TEST(TraceShrink, ARankOneDecodeKeepsTwoRanksAndOneRequestOnTheSecond) {
  const Shrunk s = shrink(four_requests_on_two_ranks(), rank_one_decodes);
  Trace want = plain_trace(2);  // DP attention is the default with dp 2: the knob goes
  want.requests = {request(0, 1, {1}, {2, 3})};
  want.steps = {{{}, {extend(0, 0, 1)}}, {{}, {decode(0, 1)}}};
  expect_trace(s.result.trace, want);
  EXPECT_EQ(s.invalid, 0);
}

// Overlap's lagging row needs overlap and nothing else: the row stays a decode after the one
// step of a one-output request.
TEST(TraceShrink, ALaggingRowKeepsOverlapAndTheStepAfterTheFinish) {
  Trace t = four_requests();
  t.config.overlap = true;
  t.steps.push_back({{}, {decode(0, 7)}});  // request 0 finished at step 5
  const Shrunk s = shrink(t, [](const Trace&, const Timeline& timeline) {
    for (const StepView& step : timeline.steps)
      for (const auto& rank : step.rows)
        for (const BatchRow& row : rank)
          if (row.lagging) return true;
    return false;
  });
  Trace want = plain_trace(1);
  want.config.overlap = true;
  want.requests = {request(0, 0, {1}, {2})};
  want.steps = {{{}, {extend(0, 0, 1)}}, {{}, {decode(0, 1)}}};
  expect_trace(s.result.trace, want);
  EXPECT_EQ(s.invalid, 0);
}

// "SGLang upstream returns a wrong row": under a late copy, its race (S8).
bool upstream_wrong(const Trace& t, const Timeline& timeline) {
  const TraceImplementation impl = make_trace_implementation("sglang").value();
  return judge_trace(impl, t, timeline).verdict == TraceVerdict::wrong_route;
}

// Every copy of four_requests as late as overlap allows: the shrinker drops the entries the race
// does not need and the steps after them (a later step's entry moves down with it). What is left:
// step 0's copy lands after step 1's forward, whose only row is request 0's lagging decode, so
// request 0's one row reads its own position 1.
TEST(TraceShrink, ALateCopyShrinksToOneEntryAndTheForwardItReads) {
  Trace t = four_requests();
  t.config.overlap = true;
  for (int s = 0; s + 1 < static_cast<int>(t.steps.size()); ++s) t.copies.push_back({s, s + 2});
  ASSERT_EQ(why_not(t), "");
  const Shrunk s = shrink(t, upstream_wrong);
  Trace want = plain_trace(1);
  want.config.overlap = true;
  want.requests = {request(0, 0, {1}, {2})};
  want.steps = {{{}, {extend(0, 0, 1)}}, {{}, {decode(0, 1)}}};
  want.copies = {{0, 2}};
  expect_trace(s.result.trace, want);
  EXPECT_EQ(s.invalid, 0);
}

// Dropping request 0 renumbers the rest, the aborted request a resume names among them.
TEST(TraceShrink, DroppingARequestRenumbersResumes) {
  Trace t = four_requests();
  t.requests[2] = request(2, 0, {20, 21}, {22}, Finish::abort);
  t.requests[3] = request(3, 0, {20, 21, 22}, {23, 24});
  t.requests[3].resume_of = 2;
  t.steps[1].run[1] = extend(2, 0, 2);
  t.steps[3].events = {test::on(TraceEvent::Kind::abort, 2)};
  t.steps[3].run = {extend(3, 0, 3)};
  t.steps[4].run = {decode(0, 5)};
  t.steps.push_back({{}, {decode(3, 3)}});
  ASSERT_EQ(why_not(t), "");
  // "A resume of a request an abort ended after it ran finishes with two outputs."
  const Shrunk s = shrink(t, [](const Trace& c, const Timeline& timeline) {
    for (const TraceRequest& r : c.requests) {
      if (!r.resume_of) continue;
      const RequestView& old = timeline.requests[static_cast<size_t>(*r.resume_of)];
      const RequestView& resumed = timeline.requests[static_cast<size_t>(r.id)];
      if (old.returns_output && resumed.finish_step >= 0 && resumed.kept_outputs == 2) return true;
    }
    return false;
  });
  Trace want = plain_trace(1);
  want.requests = {request(0, 0, {1, 2}, {3}, Finish::abort), request(1, 0, {1, 2, 3}, {4, 5})};
  want.requests[1].resume_of = 0;
  want.steps = {{{}, {extend(0, 0, 2)}},
                {{test::on(TraceEvent::Kind::abort, 0)}, {extend(1, 0, 3)}},
                {{}, {decode(1, 3)}}};
  expect_trace(s.result.trace, want);
  EXPECT_EQ(s.invalid, 0);
}

TEST(TraceShrink, SameInputSameOutput) {
  const Shrunk a = shrink(four_requests(), hit_request_finishes);
  const Shrunk b = shrink(four_requests(), hit_request_finishes);
  EXPECT_EQ(a.result.trace, b.result.trace);
  EXPECT_EQ(a.result.attempts, b.result.attempts);
  EXPECT_EQ(a.result.accepted, b.result.accepted);
  EXPECT_EQ(a.seen, b.seen);
}

// Shrinking the result again finds nothing to keep: the passes stopped at their fixpoint.
TEST(TraceShrink, TheResultIsAFixpoint) {
  const Shrunk a = shrink(four_requests(), three_outputs_finish);
  const Shrunk b = shrink(a.result.trace, three_outputs_finish);
  EXPECT_EQ(b.result.trace, a.result.trace);
  EXPECT_EQ(b.result.accepted, 0);
}

TEST(TraceShrink, MaxAttemptsBoundsTheWorkAndKeepsTheSmallestSoFar) {
  const Shrunk s = shrink(four_requests(), three_outputs_finish, 3);
  EXPECT_EQ(s.result.attempts, 3);
  EXPECT_LE(s.seen, 3);
  int invalid = 0;
  const std::optional<Timeline> timeline = checked(s.result.trace, invalid);
  ASSERT_TRUE(timeline);
  EXPECT_TRUE(three_outputs_finish(s.result.trace, *timeline));
  EXPECT_LT(s.result.trace.requests.size(), four_requests().requests.size());
}

TEST(TraceShrink, APredicateThatNeverHoldsKeepsTheInputLessItsNote) {
  const Trace input = four_requests();
  const TraceShrinkResult r = shrink_trace(input, sglang_profile(), [](const Trace&) { return false; });
  Trace want = input;
  want.note.clear();
  EXPECT_EQ(r.trace, want);
  EXPECT_EQ(r.accepted, 0);
  EXPECT_GT(r.attempts, 0);
}

TEST(TraceShrink, AnInvalidInputComesBackAsItIs) {
  Trace input = four_requests();
  input.steps[1].run[0].lo = 3;  // request 0 holds KV through 4
  int calls = 0;
  const TraceShrinkResult r = shrink_trace(input, sglang_profile(), [&](const Trace&) { return ++calls > 0; });
  EXPECT_EQ(r.trace, input);
  EXPECT_EQ(r.attempts, 0);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace r3
