#include "fuzz/oracle/judge_trace.hpp"

#include <gtest/gtest.h>

#include "tests/reference/trace/example_trace.hpp"

namespace r3 {
namespace {

RouteRef route(int req, int64_t pos, int version = 0) { return {RouteRef::Kind::route, req, pos, version}; }

// A lifecycle model that returns what the test tells it to: the oracle's input, exactly.
class ScriptedModel final : public LifecycleModel {
 public:
  LifecycleOutcome outcome;
  std::span<const LifecycleVersion> versions() const override { return versions_; }
  std::span<const LifecyclePatch> patches() const override { return {}; }
  std::vector<int> missing_patches(std::string_view) const override { return {}; }
  Status check(const Trace&, const Timeline&) const override { return ok_status(); }
  Status check_profile(const Trace&, const Timeline&, Profile) const override { return ok_status(); }
  std::optional<Case> step_case(const Trace&, const Timeline&, int) const override { return std::nullopt; }
  LifecycleOutcome run(const Trace&, const Timeline&, std::span<const StepDelivery>, std::string_view,
                       std::span<const int>) const override {
    return outcome;
  }

 private:
  LifecycleVersion versions_[1] = {{"scripted", "", "a test's", "sglang", true}};
};

class JudgeTrace : public ::testing::Test {
 protected:
  JudgeTrace() : trace_(test::example_trace()), timeline_(build_timeline(trace_).value()) {
    impl_.engine = trace_.engine;
    impl_.model = &model_;
    impl_.version = &model_.versions()[0];
    // The truth, returned: request 0 rows 0-6, request 1 request 0's 0-3 then its own 4-5, request 2 row 0.
    model_.outcome.requests.resize(3);
    for (size_t r = 0; r < 3; ++r)
      model_.outcome.requests[r] = {RequestRoutes::Status::returned, timeline_.requests[r].expected};
  }
  TraceJudgement judge() { return judge_trace(impl_, trace_, timeline_); }

  Trace trace_;
  Timeline timeline_;
  ScriptedModel model_;
  TraceImplementation impl_;
};

TEST_F(JudgeTrace, TheTruthPasses) { EXPECT_EQ(judge().verdict, TraceVerdict::pass); }

TEST_F(JudgeTrace, ARouteOfAnotherVersionNamesBoth) {
  model_.outcome.requests[1].rows[4] = route(1, 4, 1);
  const TraceJudgement j = judge();
  EXPECT_EQ(j.verdict, TraceVerdict::wrong_route);
  EXPECT_EQ(j.request, 1);
  EXPECT_EQ(j.position, 4);
  EXPECT_EQ(j.detail, "request 1 position 4 holds the route of request 1 position 4 at weight version 1, expected version 0");
}

TEST_F(JudgeTrace, ASharedPrefixIsTheSameRouteWhoeverComputedIt) {
  model_.outcome.requests[1].rows[2] = route(1, 2);  // request 1's own forward of [5, 6, 7]: the same route
  EXPECT_EQ(judge().verdict, TraceVerdict::pass);
  model_.outcome.requests[1].rows[4] = route(0, 4);  // request 0's position 4 holds token 9, not 4
  EXPECT_EQ(judge().detail, "request 1 position 4 holds the route of request 0 position 4 at weight version 0, expected "
                            "the route of request 1 position 4 at weight version 0");
}

TEST_F(JudgeTrace, ShortLongAndMissingOutputs) {
  model_.outcome.requests[0].rows.pop_back();
  TraceJudgement j = judge();
  EXPECT_EQ(j.verdict, TraceVerdict::short_output);
  EXPECT_EQ(j.detail, "request 0 returns 6 rows, expected 7 (positions 0 to 6): position 6 is missing");
  model_.outcome.requests[0].rows = timeline_.requests[0].expected;
  model_.outcome.requests[2].rows.push_back(route(2, 1));
  j = judge();
  EXPECT_EQ(j.verdict, TraceVerdict::long_output);
  EXPECT_EQ(j.detail, "request 2 returns 2 rows, expected 1 (positions 0 to 0): one row past the last is the route of "
                      "request 2 position 1 at weight version 0");
  model_.outcome.requests[2] = {RequestRoutes::Status::none, {}};
  EXPECT_EQ(judge().detail, "request 2 finished without routed experts (1 row expected)");
}

TEST_F(JudgeTrace, SilentWrongDataOutranksACrash) {
  model_.outcome.crash_step = 3;
  model_.outcome.crash = "step 3: AssertionError";
  model_.outcome.requests[0] = {RequestRoutes::Status::not_finished, {}};
  TraceJudgement j = judge();
  EXPECT_EQ(j.verdict, TraceVerdict::crash);
  EXPECT_EQ(j.detail, "the engine crashed at step 3: step 3: AssertionError");
  model_.outcome.requests[1].rows[0] = RouteRef{RouteRef::Kind::never_written};
  j = judge();
  EXPECT_EQ(j.verdict, TraceVerdict::wrong_route);
  EXPECT_EQ(severity_of(j.verdict), TraceSeverity::silent);
}

TEST_F(JudgeTrace, LifecycleFaultsChangeWhatTheModelReturns) {
  impl_.fault = LifecycleFault::drop_last;
  EXPECT_EQ(judge().verdict, TraceVerdict::short_output);
  impl_.fault = LifecycleFault::shift_one;
  EXPECT_EQ(judge().detail, "request 0 position 0 holds the route of request 0 position 1 at weight version 0, expected "
                            "the route of request 0 position 0 at weight version 0");
  impl_.fault = LifecycleFault::hit_before_store;
  EXPECT_EQ(judge().detail, "request 1 position 0 holds a row nothing wrote (zeros), expected the route of request 0 "
                            "position 0 at weight version 0");
}

TEST(TraceImplementations, NamesAndPatches) {
  EXPECT_EQ(make_trace_implementation("sglang+offload-rows").value().name(), "sglang+offload-rows");
  EXPECT_EQ(make_trace_implementation("sglang+nope").error().message,
            "\"nope\" is not a patch of sglang; its engine's are offload-rows, pd-prompt-rows, tree-accept-rows, "
            "ngram-overlap-capture, overlap-copy-race, aborted-rows");
  EXPECT_EQ(default_trace_implementations(parse_profile("sglang").value()),
            (std::vector<std::string>{"sglang", "sglang-miles"}));
  EXPECT_EQ(fixed_trace_implementations(Profile::any()), (std::vector<std::string>{"r3-fixed", "sglang-fixed", "trtllm-fixed"}));
}

}  // namespace
}  // namespace r3
