#include "fuzz/codec/trace_json.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/reference/trace/example_trace.hpp"
#include "tests/support/scratch_dir.hpp"

namespace r3 {

// A failed comparison prints the trace as its JSON text (trace_binary_test.cpp shares this).
void PrintTo(const Trace& t, std::ostream* os) { *os << trace_to_json_text(t); }

namespace test {

// Every field and event kind the format has, on a trace every rule accepts: two DP ranks, a P/D
// handoff, a prefix hit, an abort and its resume, a weight update, a verify, a preemption, an
// offload and its restore, knobs in both objects, a note and an expectation. Shared with
// trace_binary_test.cpp.
Trace every_field_trace() {
  Trace t;
  t.engine = parse_engine("sglang").value();
  t.profile = parse_profile("sglang").value();
  t.dp = 2;
  t.tp = 2;
  t.knobs = {{"topology.dp_attention", "true"}, {"topology.a2a", "\"none\""}, {"config.hicache", "false"}};
  t.model = {2, 2, 8};
  t.config.token_budget = 16;
  t.config.chunk = -1;
  t.config.page = 1;
  t.config.kv_slots = 256;
  t.config.prefix_cache = true;
  t.config.spec = SpecConfig{2, false};
  t.config.cuda_graph_decode = {1, 2, 4, 8};
  t.requests = {
      {0, 0, {1, 2, 3, 4}, {10, 11, 12, 13}, 4, Finish::length, 0, std::nullopt, std::nullopt},
      {1, 1, {1, 2, 3, 5}, {20}, 3, Finish::eos, 2, 1, std::nullopt},
      {2, 0, {7, 8}, {30}, std::nullopt, Finish::abort, 0, std::nullopt, std::nullopt},
      {3, 0, {7, 8, 30}, {31, 32}, std::nullopt, Finish::length, 0, 2, 2},
      {4, 1, {9, 9, 9}, {40, 41}, std::nullopt, Finish::length, 0, std::nullopt, std::nullopt},
  };
  t.steps = {
      {{on(TraceEvent::Kind::pd_handoff, 4)}, {extend(0, 0, 4), extend(2, 0, 2), decode(4, 3)}},
      {{hit(1, 3), on(TraceEvent::Kind::abort, 2), weight_update(1, false)}, {verify(0, 4, 1), extend(1, 3, 4)}},
      {{on(TraceEvent::Kind::preempt, 0)}, {extend(0, 0, 7), extend(3, 0, 3)}},
      {{on(TraceEvent::Kind::offload, 3)}, {}},
      {{on(TraceEvent::Kind::restore, 3)}, {decode(3, 3)}},
  };
  t.note = "every field";
  t.expect = TraceExpectation{"sglang", "wrong_route"};
  return t;
}

}  // namespace test

namespace {

using json = nlohmann::ordered_json;

// Issue 29's example, as the issue writes it.
constexpr const char* kIssueExample = R"({
  "format": "r3fuzz-trace/1",
  "engine": "sglang",
  "profile": "sglang",
  "topology": {"dp": 1, "tp": 1, "dp_attention": false, "a2a": "none"},
  "model": {"layers": 1, "top_k": 2, "experts": 16},
  "config": {"token_budget": 8, "chunk": 4, "page": 2, "kv_slots": 64, "prefix_cache": true,
             "overlap": false, "spec": null, "cuda_graph": {"decode": [1, 2, 4]}},
  "requests": [
    {"id": 0, "dp": 0, "prompt": [5, 6, 7, 8, 9], "outputs": [1, 2, 3], "finish": "length"},
    {"id": 1, "dp": 0, "prompt": [5, 6, 7, 8, 4, 4], "outputs": [2], "finish": "eos"},
    {"id": 2, "dp": 0, "prompt": [3, 3], "outputs": [7], "max_new": 0, "finish": "length"}
  ],
  "steps": [
    {"run": [{"req": 0, "extend": [0, 4]}, {"req": 2, "extend": [0, 2]}]},
    {"run": [{"req": 0, "extend": [4, 5]}]},
    {"events": [{"hit": {"req": 1, "len": 4}}], "run": [{"req": 1, "extend": [4, 6]}]},
    {"run": [{"req": 0, "decode": 5}]},
    {"run": [{"req": 0, "decode": 6}]}
  ]
}
)";

const std::filesystem::path kCorpusExample =
    std::filesystem::path(R3FUZZ_SOURCE_DIR) / "corpus" / "traces" / "issue-29-example.json";

std::string error_of(std::string_view text) {
  auto t = trace_from_json_text(text);
  return t ? "(accepted)" : t.error().message;
}

// The issue's example after `edit`, as text.
std::string edited(const std::function<void(json&)>& edit) {
  json doc = json::parse(kIssueExample);
  edit(doc);
  return doc.dump();
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---- the example ---------------------------------------------------------------------------

TEST(TraceJson, ReadsIssue29sExampleAsTheSharedFixture) {
  auto t = trace_from_json_text(kIssueExample);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(*t, test::example_trace());
}

TEST(TraceJson, TheCorpusExampleIsTheFixtureWithANoteAndIsWrittenByteForByte) {
  auto t = read_trace_file(kCorpusExample.string());
  ASSERT_TRUE(t) << t.error().message;
  Trace expected = test::example_trace();
  expected.note = "issue 29's example: request 1 hits request 0's first two pages; request 2 is prefill-only";
  EXPECT_EQ(*t, expected);
  EXPECT_EQ(trace_to_json_text(*t), slurp(kCorpusExample));
}

TEST(TraceJson, WritesTheKeyOrderDefaultsAndLayout) {
  const std::string text = trace_to_json_text(test::example_trace());
  // Knobs after the generic keys, in key order; every generic config key; one request per line,
  // max_new only where set; "events" only on the step that has them.
  EXPECT_NE(text.find("  \"topology\": {\"dp\": 1, \"tp\": 1, \"a2a\": \"none\", \"dp_attention\": false},\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  \"config\": {\"token_budget\": 8, \"chunk\": 4, \"page\": 2, \"kv_slots\": 64, "
                      "\"prefix_cache\": true, \"overlap\": false, \"spec\": null, \"cuda_graph\": {\"decode\": [1, 2, 4]}},\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    {\"id\": 2, \"dp\": 0, \"prompt\": [3, 3], \"outputs\": [7], \"max_new\": 0, \"finish\": \"length\"}\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    {\"events\": [{\"hit\": {\"req\": 1, \"len\": 4}}], \"run\": [{\"req\": 1, \"extend\": [4, 6]}]},\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("start_len"), std::string::npos);
  EXPECT_EQ(text.find("\"note\""), std::string::npos);
  EXPECT_EQ(text.find("\"expect\""), std::string::npos);
  EXPECT_EQ(text.substr(0, 2), "{\n");
  EXPECT_EQ(text.substr(text.size() - 4), "]\n}\n");
}

TEST(TraceJson, WritesEveryEventInItsOneForm) {
  const std::string text = trace_to_json_text(test::every_field_trace());
  for (const char* form : {"{\"pd_handoff\": {\"req\": 4}}", "{\"hit\": {\"req\": 1, \"len\": 3}}", "{\"abort\": 2}",
                           "{\"weight_update\": {\"version\": 1, \"flush\": false}}", "{\"preempt\": 0}",
                           "{\"offload\": {\"req\": 3}}", "{\"restore\": {\"req\": 3}}",
                           "{\"req\": 0, \"verify\": {\"at\": 4, \"accepted\": 1}}", "{\"req\": 3, \"decode\": 3}",
                           "\"spec\": {\"width\": 2, \"tree\": false}",
                           "{\"id\": 1, \"dp\": 1, \"prompt\": [1, 2, 3, 5], \"outputs\": [20], \"max_new\": 3, \"finish\": "
                           "\"eos\", \"start_len\": 2, \"arrival\": 1}",
                           "\"resume_of\": 2}", "\"hicache\": false}",
                           "  \"note\": \"every field\",\n  \"expect\": {\"impl\": \"sglang\", \"verdict\": \"wrong_route\"}\n}\n"})
    EXPECT_NE(text.find(form), std::string::npos) << form << "\n" << text;
}

// ---- round trips ---------------------------------------------------------------------------

TEST(TraceJson, RoundTripsTheExampleAndEveryField) {
  for (const Trace& t : {test::example_trace(), test::every_field_trace()}) {
    auto text = trace_from_json_text(trace_to_json_text(t));
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(*text, t);
    auto doc = trace_from_json(trace_to_json(t));
    ASSERT_TRUE(doc) << doc.error().message;
    EXPECT_EQ(*doc, t);
  }
}

TEST(TraceJson, FilesRoundTripAndErrorsNameThePath) {
  test::ScratchDir dir("trace-json");
  const std::string path = (dir.path() / "every.json").string();
  ASSERT_TRUE(write_trace_file(path, test::every_field_trace()));
  auto back = read_trace_file(path);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, test::every_field_trace());

  const std::string bad = dir.write("bad.json", edited([](json& d) { d["requests"][1]["finish"] = "done"; })).string();
  EXPECT_EQ(read_trace_file(bad).error().message,
            bad + ": requests[1].finish: \"done\" is not one of length, eos, stop, abort");
  const std::string missing = (dir.path() / "missing.json").string();
  EXPECT_EQ(read_trace_file(missing).error().message.rfind(missing + ": cannot open: ", 0), 0u)
      << read_trace_file(missing).error().message;
}

TEST(TraceJson, AbsentEngineIsTheDefaultEngine) {
  // Without "engine" the trace reads exactly as it does naming the default engine, whatever that
  // engine's lifecycle makes of it.
  auto without = [](json& d) {
    d.erase("profile");
    d["topology"].erase("dp_attention");
    d["topology"].erase("a2a");
  };
  auto absent = trace_from_json_text(edited([&](json& d) {
    without(d);
    d.erase("engine");
  }));
  auto named = trace_from_json_text(edited([&](json& d) {
    without(d);
    d["engine"] = std::string(to_string(Engine{}));
  }));
  ASSERT_EQ(absent.ok(), named.ok());
  if (absent) {
    EXPECT_EQ(absent->engine, Engine{});
    EXPECT_EQ(*absent, *named);
  } else {
    EXPECT_EQ(absent.error().message, named.error().message);
  }
}

TEST(TraceJson, LooksLikeTraceByTheFormatOnly) {
  EXPECT_TRUE(looks_like_trace(nlohmann::json::parse(kIssueExample)));
  EXPECT_TRUE(looks_like_trace(nlohmann::json::parse(R"({"format": "r3fuzz-trace/1"})")));
  EXPECT_FALSE(looks_like_trace(nlohmann::json::parse(R"({"format": "r3fuzz-case/1", "steps": []})")));
  EXPECT_FALSE(looks_like_trace(nlohmann::json::parse(R"({"format": 1})")));
  EXPECT_FALSE(looks_like_trace(nlohmann::json::parse(R"(["r3fuzz-trace/1"])")));
}

// ---- errors --------------------------------------------------------------------------------

TEST(TraceJson, UnknownKeysAreNamedWithTheirPath) {
  EXPECT_EQ(error_of(edited([](json& d) { d["stesp"] = 1; })),
            "trace: unknown key \"stesp\" (allowed: format, engine, profile, topology, model, config, requests, steps, "
            "copies, note, expect)");
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"][2]["run"][0] = json{{"req", 1}, {"extnd", {4, 6}}}; })),
            "steps[2].run[0]: unknown key \"extnd\" (allowed: req, extend, decode, verify)");
  EXPECT_EQ(error_of(edited([](json& d) { d["requests"][0]["max_news"] = 3; })),
            "requests[0]: unknown key \"max_news\" (allowed: id, dp, prompt, outputs, max_new, finish, start_len, "
            "arrival, resume_of)");
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"][0]["evnts"] = json::array(); })),
            "steps[0]: unknown key \"evnts\" (allowed: events, run)");
  EXPECT_EQ(error_of(edited([](json& d) { d["config"]["spec"] = json{{"width", 2}, {"tree", false}, {"k", 1}}; })),
            "config.spec: unknown key \"k\" (allowed: width, tree)");
  EXPECT_EQ(error_of(edited([](json& d) { d["config"]["cuda_graph"] = json{{"prefill", {4}}}; })),
            "config.cuda_graph: unknown key \"prefill\" (allowed: decode)");
  EXPECT_EQ(error_of(edited([](json& d) { d["expect"] = json{{"impl", "sglang"}, {"verdict", "pass"}, {"severity", 1}}; })),
            "expect: unknown key \"severity\" (allowed: impl, verdict)");
}

TEST(TraceJson, WrongTypesAreNamedWithTheirPath) {
  EXPECT_EQ(error_of("[]"), "trace: expected an object, got array");
  EXPECT_EQ(error_of(edited([](json& d) { d["config"]["token_budget"] = "8"; })),
            "config.token_budget: expected an integer, got string");
  EXPECT_EQ(error_of(edited([](json& d) { d["requests"][0]["prompt"][1] = 1.5; })),
            "requests[0].prompt[1]: expected an integer, got number 1.5");
  EXPECT_EQ(error_of(edited([](json& d) { d["config"]["prefix_cache"] = 1; })),
            "config.prefix_cache: expected true or false, got number");
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"] = "none"; })), "steps: expected a list, got string");
  EXPECT_EQ(error_of(edited([](json& d) { d["topology"] = 1; })), "topology: expected an object, got number");
  EXPECT_EQ(error_of(edited([](json& d) { d["config"]["spec"] = 2; })),
            "config.spec: expected null or {\"width\": k, \"tree\": bool}, got number");
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"][3]["run"][0]["verify"] = 5; })),
            "steps[3].run[0]: expected exactly one of extend, decode, verify, got 2");
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"][3]["run"][0] = json{{"req", 0}, {"verify", 5}}; })),
            "steps[3].run[0].verify: expected {\"at\": q, \"accepted\": a}, got number");
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"][0]["run"][0]["extend"] = {0}; })),
            "steps[0].run[0].extend: expected [from, to], got a list of 1");
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"][0]["run"][0] = json{{"req", 0}}; })),
            "steps[0].run[0]: expected exactly one of extend, decode, verify, got 0");
  EXPECT_EQ(error_of(edited([](json& d) { d["note"] = 3; })), "note: expected a string, got number");
  EXPECT_EQ(error_of(edited([](json& d) { d["requests"][0].erase("finish"); })), "requests[0].finish: required key is missing");
}

TEST(TraceJson, BadFinishAndFormatAreNamed) {
  EXPECT_EQ(error_of(edited([](json& d) { d["requests"][1]["finish"] = "done"; })),
            "requests[1].finish: \"done\" is not one of length, eos, stop, abort");
  EXPECT_EQ(error_of(edited([](json& d) { d["format"] = "r3fuzz-case/1"; })),
            "format: \"r3fuzz-case/1\" is not supported (expected \"r3fuzz-trace/1\")");
  EXPECT_EQ(error_of(edited([](json& d) { d.erase("format"); })), "format: required key is missing");
  EXPECT_EQ(error_of(edited([](json& d) { d["engine"] = "tgi"; })).rfind("engine: \"tgi\" is not one of ", 0), 0u);
  EXPECT_EQ(error_of(edited([](json& d) { d["profile"] = "nope"; })).rfind("profile: \"nope\" is not one of ", 0), 0u);
  EXPECT_EQ(error_of("{").rfind("invalid JSON: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"format": "r3fuzz-trace/1", "format": "r3fuzz-trace/1"})").rfind("duplicate key \"format\"", 0), 0u);
}

TEST(TraceJson, EachEventKindReadsInItsOneForm) {
  auto event = [](json e) { return error_of(edited([&](json& d) { d["steps"][2]["events"][0] = e; })); };
  EXPECT_EQ(event(json{{"offload", 1}}),
            "steps[2].events[0].offload: expected {\"req\": r}, as in {\"offload\": {\"req\": 1}}, got number");
  EXPECT_EQ(event(json{{"restore", 1}}),
            "steps[2].events[0].restore: expected {\"req\": r}, as in {\"restore\": {\"req\": 1}}, got number");
  EXPECT_EQ(event(json{{"pd_handoff", 1}}),
            "steps[2].events[0].pd_handoff: expected {\"req\": r}, as in {\"pd_handoff\": {\"req\": 1}}, got number");
  EXPECT_EQ(event(json{{"preempt", {{"req", 1}}}}),
            "steps[2].events[0].preempt: expected a request id, as in {\"preempt\": 1}, got object");
  EXPECT_EQ(event(json{{"abort", {{"req", 1}}}}),
            "steps[2].events[0].abort: expected a request id, as in {\"abort\": 1}, got object");
  EXPECT_EQ(event(json{{"hit", 1}}), "steps[2].events[0].hit: expected {\"req\": r, \"len\": n}, got number");
  EXPECT_EQ(event(json{{"weight_update", 1}}),
            "steps[2].events[0].weight_update: expected {\"version\": v, \"flush\": bool}, got number");
  EXPECT_EQ(event(json{{"weight_update", {{"version", 1}}}}),
            "steps[2].events[0].weight_update.flush: required key is missing");
  EXPECT_EQ(event(json{{"hit", {{"req", 1}, {"length", 4}}}}),
            "steps[2].events[0].hit: unknown key \"length\" (allowed: req, len)");
  EXPECT_EQ(event(json{{"flush", 1}}),
            "steps[2].events[0]: \"flush\" is not an event; the events are hit, preempt, abort, weight_update, offload, "
            "restore, pd_handoff");
  EXPECT_EQ(event(json{{"hit", {{"req", 1}, {"len", 4}}}, {"abort", 1}}),
            "steps[2].events[0]: expected an object with one key, the event's kind, got 2 keys");
  EXPECT_EQ(event(json("hit")), "steps[2].events[0]: expected an object with one key, the event's kind, got string");
  EXPECT_EQ(event(json{{"abort", 7}}), "steps[2].events[0].abort: 7 names no request (the trace has 3)");
}

TEST(TraceJson, KnobsAreScalarsAndObjectsOrListsAreNamed) {
  EXPECT_EQ(error_of(edited([](json& d) { d["topology"]["a2a"] = json{{"mode", "deepep"}}; })),
            "topology.a2a: an engine knob's value must be a scalar (true, 4, \"deepep\"), got object");
  EXPECT_EQ(error_of(edited([](json& d) { d["config"]["hicache"] = {1, 2}; })),
            "config.hicache: an engine knob's value must be a scalar (true, 4, \"deepep\"), got array");
  auto t = trace_from_json_text(kIssueExample);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->knobs, (TraceKnobs{{"topology.a2a", "\"none\""}, {"topology.dp_attention", "false"}}));
}

TEST(TraceJson, RangesAndSizesAreRefusedBeforeAnythingIsBuilt) {
  EXPECT_EQ(error_of(edited([](json& d) { d["requests"][0]["prompt"] = std::vector<int>(65537, 1); })),
            "requests[0].prompt: 65537 tokens, at most 65536");
  EXPECT_EQ(error_of(edited([](json& d) { d["requests"][0]["prompt"][0] = -1; })),
            "requests[0].prompt[0]: -1 is out of range (0 to 2147483647)");
  EXPECT_EQ(error_of(edited([](json& d) { d["config"]["chunk"] = 0; })),
            "config.chunk: 0 is out of range (-1 for off, or 1 to 16777216)");
  EXPECT_EQ(error_of(edited([](json& d) { d["topology"]["dp"] = 65; })), "topology.dp: 65 is out of range (1 to 64)");
  EXPECT_EQ(error_of(edited([](json& d) { d["requests"][0]["dp"] = 1; })), "requests[0].dp: 1 is out of range (0 to 0)");
  EXPECT_EQ(error_of(edited([](json& d) { d["requests"][1]["id"] = 5; })),
            "requests[1].id: 5, expected 1 (a request's id is its place in the list)");
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"][0]["run"][0]["req"] = 3; })),
            "steps[0].run[0].req: 3 names no request (the trace has 3)");
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"][0]["run"][0]["req"] = 1.0; })),
            "steps[0].run[0].req: expected an integer, got number 1.0");
  EXPECT_EQ(error_of(edited([](json& d) { d["config"]["cuda_graph"]["decode"] = std::vector<int>(1025, 1); })),
            "config.cuda_graph.decode: 1025 sizes, at most 1024");
  EXPECT_EQ(error_of(edited([](json& d) { d["note"] = std::string((1 << 20) + 1, 'x'); })),
            "note: 1048577 bytes, at most 1048576 (1 MiB, the binary trace format's limit)");
  EXPECT_EQ(error_of(edited([](json& d) { d["expect"] = json{{"impl", ""}, {"verdict", "pass"}}; })),
            "expect.impl: must name an implementation, got an empty string");
}

TEST(TraceJson, TraceRulesAreValidateTracesErrors) {
  // A rule of the walk (reference/trace/timeline.hpp), not of the format: its error as it is.
  EXPECT_EQ(error_of(edited([](json& d) { d["steps"][1]["run"][0]["extend"] = {3, 5}; })),
            "steps[1].run[0]: request 0 extends from 3 but holds KV for positions [0, 4)");
}

TEST(TraceJson, WhetherAKnobIsKnownIsTheEnginesCall) {
  // The codec keeps any scalar knob; the engine's lifecycle check (through validate_trace) names it.
  const std::string error = error_of(edited([](json& d) { d["config"]["hicach"] = true; }));
  EXPECT_EQ(error.rfind("knobs: \"config.hicach\" is not an SGLang knob; SGLang takes ", 0), 0u) << error;
}

TEST(TraceJson, KnobRulesAreTheSameInBothForms) {
  EXPECT_TRUE(check_trace_knob("topology.a2a", "\"deepep\""));
  EXPECT_TRUE(check_trace_knob("config.hicache", "true"));
  EXPECT_EQ(check_trace_knob("page.x", "1").error().message, "knob \"page.x\": expected topology.KEY or config.KEY");
  EXPECT_EQ(check_trace_knob("config.page", "2").error().message, "config.page: a generic key of config, not an engine knob");
  EXPECT_EQ(check_trace_knob("topology.tp", "2").error().message, "topology.tp: a generic key of topology, not an engine knob");
  EXPECT_EQ(check_trace_knob("config.hicache", "1e2").error().message,
            "config.hicache: the knob's value 1e2 is not written as the JSON writer writes it (100.0)");
  EXPECT_EQ(check_trace_knob("config.hicache", "{}").error().message,
            "config.hicache: an engine knob's value must be a scalar (true, 4, \"deepep\"), got object");
  EXPECT_EQ(check_trace_knob("config.hicache", "yes").error().message.rfind("config.hicache: the knob's value is not JSON: invalid JSON: ", 0),
            0u);
  EXPECT_EQ(check_trace_knob("config.x", std::string(1025, '1')).error().message,
            "config.x: the knob's value is 1025 bytes, at most 1024");
}

// ---- the copies record ----------------------------------------------------------------------

Trace with_copies() {
  Trace t = test::example_trace();
  t.copies = {{1, 3}, {2, 5}};
  return t;
}

TEST(TraceJson, CopiesAreWrittenAfterTheStepsOneEntryPerLine) {
  const std::string text = trace_to_json_text(with_copies());
  const std::string tail =
      "    {\"run\": [{\"req\": 0, \"decode\": 6}]}\n"
      "  ],\n"
      "  \"copies\": [\n"
      "    {\"step\": 1, \"done_before_step\": 3},\n"
      "    {\"step\": 2, \"done_before_step\": 5}\n"
      "  ]\n"
      "}\n";
  ASSERT_GE(text.size(), tail.size());
  EXPECT_EQ(text.substr(text.size() - tail.size()), tail);
  EXPECT_EQ(trace_to_json_text(test::example_trace()).find("copies"), std::string::npos);  // absent when empty
  auto back = trace_from_json_text(text);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, with_copies());
  EXPECT_EQ(trace_to_json_text(*back), text);
}

TEST(TraceJson, CopiesAreReadWithTheirPathsAndRules) {
  auto with = [](json copies) { return edited([&](json& d) { d["copies"] = copies; }); };
  EXPECT_EQ(error_of(with(json::parse(R"([{"step": 1, "done_before_step": 3}])"))), "(accepted)");
  EXPECT_EQ(error_of(with(json::parse(R"({"step": 1})"))), "copies: expected a list, got object");
  EXPECT_EQ(error_of(with(json::parse(R"([{"step": 1, "done": 3}])"))), "copies[0]: unknown key \"done\" (allowed: step, done_before_step)");
  EXPECT_EQ(error_of(with(json::parse(R"([{"step": 1}])"))), "copies[0].done_before_step: required key is missing");
  EXPECT_EQ(error_of(with(json::parse(R"([{"step": -1, "done_before_step": 3}])"))),
            "copies[0].step: -1 is out of range (0 to 100000)");
  EXPECT_EQ(error_of(with(json::parse(R"([{"step": 1, "done_before_step": "3"}])"))), "copies[0].done_before_step: expected an integer, got string");
  EXPECT_EQ(error_of(with(json::parse(R"([{"step": 1, "done_before_step": 3}, {"step": 3, "done_before_step": 2}])"))),
            "copies[1].done_before_step: 2 is not after step 3");
}

TEST(TraceJson, NoEditOfTheExampleThrowsOrCrashes) {
  // Every single-byte deletion and every replacement by a structural character: each read ends in
  // a trace or an error value.
  const std::string text = kIssueExample;
  int accepted = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    for (const std::string& edit : {std::string(), std::string("}"), std::string("\""), std::string("-")}) {
      std::string mutated = text;
      mutated.replace(i, 1, edit);
      auto t = trace_from_json_text(mutated);
      accepted += t.ok();
    }
  }
  EXPECT_GT(accepted, 0);  // deleting a space, say
}

}  // namespace
}  // namespace r3
