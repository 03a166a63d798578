#include "fuzz/cli/trace_explain.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/reference/trace/example_trace.hpp"

namespace r3 {
namespace {

using test::decode;
using test::example_trace;
using test::extend;
using test::verify;
using test::weight_update;

RouteRef route(int req, int64_t pos, int version = 0) { return {RouteRef::Kind::route, req, pos, version}; }

std::vector<RouteRef> routes(int req, int64_t lo, int64_t hi, int version = 0) {
  std::vector<RouteRef> out;
  for (int64_t p = lo; p < hi; ++p) out.push_back(route(req, p, version));
  return out;
}

RequestRoutes returned(std::vector<RouteRef> rows) { return {RequestRoutes::Status::returned, std::move(rows)}; }

std::string explain(const Trace& t, const TraceJudgement* judged) {
  const Result<Timeline> timeline = build_timeline(t);
  if (!timeline) return "invalid trace: " + timeline.error().message;
  return explain_trace_text(t, *timeline, judged);
}

const std::string kExampleHeader =
    "trace: engine sglang, profile sglang, dp 1 tp 1, model layers 1 top_k 2 experts 16, config token_budget 8 "
    "chunk 4 page 2 kv_slots 64 prefix_cache true overlap false spec null cuda_graph [1,2,4], knobs "
    "topology.a2a=\"none\" topology.dp_attention=false\n";

const std::string kExampleTimeline =
    "requests:\n"
    "  id  dp  P  outputs  finish  start  S  rows  tokens             notes\n"
    "  r0   0  5        3  length      0  8     7  5 6 7 8 9 | 1 2 3\n"
    "  r1   0  6        1  eos         0  7     6  5 6 7 8 4 4 | 2\n"
    "  r2   0  2        1  length      0  2     1  3 3 | 7            max_new 0\n"
    "steps:\n"
    "  step  v  events        dp0            end\n"
    "     0  0                r0:0-3 r2:0-1  done r2\n"
    "     1  0                r0:4\n"
    "     2  0  hit r1 len 4  r1:4-5         done r1\n"
    "     3  0                r0:5\n"
    "     4  0                r0:6           done r0\n";

TEST(TraceExplain, TheIssueExampleWithoutAJudgement) {
  EXPECT_EQ(explain(example_trace(), nullptr), kExampleHeader + kExampleTimeline);
}

// A lifecycle that serves request 1's own positions 4-5 from request 0's slots: the hit's pages
// are right, the rest of the path is not.
TEST(TraceExplain, TheIssueExampleWithAWrongRouteJudgement) {
  TraceJudgement judged;
  judged.verdict = TraceVerdict::wrong_route;
  judged.request = 1;
  judged.position = 4;
  judged.detail = "request 1 position 4 holds request 0 position 4 at weight version 0, expected request 1 position 4 "
                  "at weight version 0";
  judged.returned = {returned(routes(0, 0, 7)), returned(routes(0, 0, 6)), returned(routes(2, 0, 1))};
  EXPECT_EQ(explain(example_trace(), &judged),
            kExampleHeader + kExampleTimeline +
                "routes:\n"
                "  r0  expected  r0:0-6@v0\n"
                "      returned  r0:0-6@v0\n"
                "  r1  expected  r0:0-3@v0 r1:4-5@v0\n"
                "      returned  r0:0-5@v0\n"
                "      differs   at position 4: returned r0:4@v0, expected r1:4@v0\n"
                "  r2  expected  r2:0@v0\n"
                "      returned  r2:0@v0\n"
                "verdict: wrong_route (silent): request 1 position 4 holds request 0 position 4 at weight version 0, "
                "expected request 1 position 4 at weight version 0\n");
}

// Request 1 returns its rows 0-3 under its own name where the truth names request 0's forward:
// both are the same route (same prefix, same version), so only the missing row is marked.
TEST(TraceExplain, ARowNamedByAnotherRequestWithTheSamePrefixIsTheSameRoute) {
  TraceJudgement judged;
  std::vector<RouteRef> own = routes(1, 0, 6);
  own.pop_back();  // one row short
  judged.verdict = TraceVerdict::short_output;
  judged.request = 1;
  judged.position = 5;
  judged.returned = {returned(routes(0, 0, 7)), returned(own), returned(routes(2, 0, 1))};
  const std::string text = explain(example_trace(), &judged);
  EXPECT_NE(text.find("  r1  expected  r0:0-3@v0 r1:4-5@v0\n"
                      "      returned  r1:0-4@v0\n"
                      "      differs   at position 5: returned nothing, expected r1:5@v0\n"
                      "  r2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("verdict: short_output (detectable)\n"), std::string::npos) << text;
}

TEST(TraceExplain, MissingAndUnfinishedRequests) {
  TraceJudgement judged;
  judged.verdict = TraceVerdict::missing_output;
  judged.request = 1;
  judged.detail = "request 1 finished without routed_experts";
  judged.returned = {returned(routes(0, 0, 7)), {RequestRoutes::Status::none, {}}, {}};
  const std::string text = explain(example_trace(), &judged);
  EXPECT_NE(text.find("routes:\n"
                      "  r0  expected  r0:0-6@v0\n"
                      "      returned  r0:0-6@v0\n"
                      "  r1  expected  r0:0-3@v0 r1:4-5@v0\n"
                      "      returned  none (finished without routes)\n"
                      "      differs   no routes came back\n"
                      "  r2  expected  r2:0@v0\n"
                      "      returned  nothing (never finished)\n"
                      "      differs   the engine never finished it\n"
                      "verdict: missing_output (detectable): request 1 finished without routed_experts\n"),
            std::string::npos)
      << text;
}

// Two DP ranks, a chain verify with a rejected draft, a weight update and overlap's lagging rows.
Trace features_trace() {
  Trace t = example_trace();
  t.dp = 2;
  t.knobs.clear();
  t.model = {2, 1, 4};
  t.config = {};
  t.config.overlap = true;
  t.config.spec = SpecConfig{2, false};
  t.requests = {
      {0, 0, {1, 2}, {3, 4, 5, 6}, std::nullopt, Finish::length, 0, std::nullopt, std::nullopt},
      {1, 1, {7, 8, 9}, {10}, 4, Finish::eos, 2, std::nullopt, std::nullopt},
  };
  t.steps = {
      {{}, {extend(0, 0, 2), extend(1, 0, 3)}},
      {{weight_update(1, false)}, {verify(0, 2, 1), decode(1, 3)}},
      {{}, {decode(0, 4)}},
      {{}, {decode(0, 5)}},
  };
  return t;
}

TEST(TraceExplain, DraftsLaggingRowsWeightUpdatesAndRanks) {
  TraceJudgement judged;
  judged.verdict = TraceVerdict::wrong_route;
  judged.request = 0;
  judged.position = 4;
  std::vector<RouteRef> rows = routes(0, 0, 2);
  for (const RouteRef& r : routes(0, 2, 4, 1)) rows.push_back(r);
  rows.push_back({RouteRef::Kind::draft, 0, 4, 1});
  judged.returned = {returned(rows),
                     returned({{RouteRef::Kind::padding}, {RouteRef::Kind::padding}, {RouteRef::Kind::never_written}})};
  EXPECT_EQ(explain(features_trace(), &judged),
            "trace: engine sglang, profile sglang, dp 2 tp 1, model layers 2 top_k 1 experts 4, config token_budget 8 "
            "chunk -1 page 1 kv_slots 64 prefix_cache false overlap true spec width 2 chain cuda_graph [], knobs none\n"
            "requests:\n"
            "  id  dp  P  outputs  finish  start  S  rows  tokens         notes\n"
            "  r0   0  2        4  length      0  6     5  1 2 | 3 4 5 6\n"
            "  r1   1  3        1  eos         2  4     1  7 8 9 | 10     max_new 4\n"
            "steps:\n"
            "  step  v  events     dp0           dp1     end\n"
            "     0  0             r0:0-1        r1:0-2  done r1\n"
            "     1  1  weight v1  r0:2-3 r0:4x  r1:3~\n"
            "     2  1             r0:4          -       done r0\n"
            "     3  1             r0:5~         -\n"
            "routes:\n"
            "  r0  expected  r0:0-1@v0 r0:2-4@v1\n"
            "      returned  r0:0-1@v0 r0:2-3@v1 draft r0:4\n"
            "      differs   at position 4: returned draft r0:4, expected r0:4@v1\n"
            "  r1  expected  r1:2@v0\n"
            "      returned  pad*2 zero\n"
            "      differs   at position 2: returned pad, expected r1:2@v0\n"
            "verdict: wrong_route (silent)\n");
}

}  // namespace
}  // namespace r3
