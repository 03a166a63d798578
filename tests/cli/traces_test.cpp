// End-to-end tests of the commands on serving traces (docs/TRACES.md): run --traces, replay,
// explain and shrink on trace files, seed --serving-trace and --to-binary/--to-json on traces,
// mutants --traces. R3FUZZ_BINARY names the binary under test.
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_binary.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using Ran = r3::test::BinaryRun;
using r3::test::read_file_bytes;

const fs::path kCorpus = fs::path(R3FUZZ_SOURCE_DIR) / "corpus";

class Traces : public ::testing::Test {
 protected:
  Ran run(const std::string& args) { return r3::test::run_binary_command_line(R3FUZZ_BINARY, args, dir_); }
  fs::path write(const std::string& name, const std::string& text) { return scratch_.write(name, text); }
  bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

  const r3::test::ScratchDir scratch_{"r3fuzz-traces-e2e"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(Traces, ACampaignOfSglangsReleasedVersionsFindsTheLifecycleBugsEachWithItsPatch) {
  const Ran r = run("run --traces --profile sglang --cases 400 --jobs 1 --json --out out");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["traces"], 400);
  EXPECT_EQ(report["invalid_draws"], 0);
  std::set<std::string> causes;
  for (const auto& f : report["findings"]) {
    causes.insert(f["root_cause"].get<std::string>());
    // Every reproducer is written, replays as its "expect" says, and is small.
    const Ran replayed = run("replay " + f["file"].get<std::string>());
    EXPECT_EQ(replayed.exit_code, 0) << replayed.out;
    EXPECT_TRUE(contains(replayed.out, ": as expected")) << replayed.out;
    EXPECT_TRUE(f["reproducer"].get<std::string>().rfind("1 request, ", 0) == 0) << f["reproducer"];
  }
  // Lifecycle bugs by the fixed model's patch; a per-step bug by the per-step fix's (finding S4).
  for (const char* cause : {"pd-prompt-rows", "overlap-copy-race", "tree-accept-rows", "offload-rows",
                            "step-capture:window-token-bucket"})
    EXPECT_TRUE(causes.count(cause)) << cause;
}

TEST_F(Traces, TheReportIsTheSameForEveryJobCount) {
  const Ran one = run("run --traces --profile sglang --cases 150 --jobs 1 --json --no-shrink --out one");
  const Ran two = run("run --traces --profile sglang --cases 150 --jobs 2 --json --no-shrink --out two");
  ASSERT_EQ(one.exit_code, 1) << one.err;
  auto a = nlohmann::json::parse(one.out);
  auto b = nlohmann::json::parse(two.out);
  for (auto* report : {&a, &b})
    for (auto& f : (*report)["findings"]) f.erase("file"), f.erase("replay"), f.erase("export");
  EXPECT_EQ(a, b);
}

TEST_F(Traces, TheFixedModelsComeOutClean) {
  Ran r = run("run --traces --profile sglang --impl sglang-fixed --cases 300 --out out");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "no trace findings\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "result: 0 trace findings in 300 traces (seed 1, profile sglang)\n")) << r.out;
  r = run("run --traces --profile vllm --impl r3-fixed --cases 300 --out out");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "result: 0 trace findings in 300 traces (seed 1, profile vllm)\n")) << r.out;
}

TEST_F(Traces, FlagsThatShapeCasesAndUnknownImplementationsAreRefused) {
  Ran r = run("run --traces --mode symbolic --cases 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "r3fuzz run: --traces: --mode applies to case campaigns only (a trace's layouts come from its steps)\n");
  r = run("run --traces --impl gpu --cases 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "r3fuzz run: --impl gpu: \"gpu\" is not a trace implementation; they are vllm-50874, vllm-pre-50874, "
                   "r3-fixed, sglang, sglang-miles, sglang-fixed, trtllm, trtllm-06a976ce, trtllm-fixed\n");
  r = run("run --traces --profile vllm --impl sglang --cases 5");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "r3fuzz run: --impl sglang: judges no trace of profile vllm, which is vllm's\n");
}

TEST_F(Traces, ReplayChecksATracesExpect) {
  const fs::path src = kCorpus / "traces" / "regression" / "sglang-tree-accept-rows-wrong_route.json";
  Ran r = run("replay " + src.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, ": sglang: wrong_route (trace): as expected\n")) << r.out;
  // A failing verdict says how to replay it and whether it exports: this one's finding is the
  // speculative worker's (the tree's KV move), which the SGLang trace export cannot drive.
  EXPECT_TRUE(contains(r.out, "\n  replay: " + std::string(R3FUZZ_BINARY) + " replay " + src.string() +
                                  "\n  export: (none: steps[2].run[0]: a tree verify that accepts 1 of 3 drafts: the "
                                  "worker moves the accepted path's KV (eagle_worker_common.py, "
                                  "_finalize_accept_tree_path; spec_utils.py, move_accept_tokens_to_target_kvcache), "
                                  "not the capturer)\n"))
      << r.out;
  const fs::path exportable = kCorpus / "traces" / "regression" / "trtllm-decode-position-wrong_route.json";
  const Ran e = run("replay " + exportable.string());
  EXPECT_TRUE(contains(e.out, "\n  export: " + std::string(R3FUZZ_BINARY) + " export " + exportable.string() + " --pytest\n"))
      << e.out;
  r = run("replay " + src.string() + " --impl sglang-fixed");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, ": sglang-fixed: pass (trace)\n")) << r.out;
  auto doc = nlohmann::json::parse(read_file_bytes(src));
  doc["expect"]["verdict"] = "pass";
  const fs::path wrong = write("wrong.json", doc.dump());
  r = run("replay " + wrong.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "wrong.json: sglang: wrong_route (trace): UNEXPECTED, the file expects pass\n")) << r.out;
}

TEST_F(Traces, ExplainPrintsTheTimelineThenEachVersionsRows) {
  const Ran r = run("explain " + (kCorpus / "traces" / "issue-29-example.json").string() + " --impl sglang-fixed");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "     2  0  hit r1 len 4  r1:4-5         done r1\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "== sglang-fixed: pass\nroutes:\n  r0  expected  r0:0-6@v0\n      returned  r0:0-6@v0\n"))
      << r.out;
}

// The same explanation for a program: request 1's prefix hit reads request 0's forward for
// positions 0 to 3, its own for 4 and 5; a failing version names its first difference and cause.
TEST_F(Traces, ExplainJsonGivesTheTimelineAndEachJudgement) {
  const Ran r = run("explain --json " + (kCorpus / "traces" / "issue-29-example.json").string() +
                    " --impl sglang-fixed");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["format"], "r3fuzz-explain-trace/1");
  EXPECT_EQ(doc["engine"], "sglang");
  ASSERT_EQ(doc["requests"].size(), 3u);
  const auto& r1 = doc["requests"][1];
  EXPECT_EQ(r1["finish_step"], 2);
  EXPECT_EQ(r1["total"], 7);
  ASSERT_EQ(r1["expected"].size(), 6u);
  EXPECT_EQ(r1["expected"][3], (nlohmann::json{{"kind", "route"}, {"req", 0}, {"pos", 3}, {"version", 0}}));
  EXPECT_EQ(r1["expected"][4], (nlohmann::json{{"kind", "route"}, {"req", 1}, {"pos", 4}, {"version", 0}}));
  EXPECT_EQ(doc["steps"][2]["rows"][0].size(), 2u);
  EXPECT_EQ(doc["steps"][2]["finished"], (nlohmann::json{1}));
  ASSERT_EQ(doc["judgements"].size(), 1u);
  const auto& fixed = doc["judgements"][0];
  EXPECT_EQ(fixed["impl"], "sglang-fixed");
  EXPECT_EQ(fixed["verdict"], "pass");
  EXPECT_TRUE(fixed["root_cause"].is_null());
  EXPECT_EQ(fixed["returned"][1]["rows"], r1["expected"]);

  const fs::path failing = kCorpus / "traces" / "regression" / "trtllm-decode-position-wrong_route.json";
  const auto bad = nlohmann::json::parse(run("explain --json " + failing.string() + " --impl trtllm").out);
  const auto& j = bad["judgements"][0];
  EXPECT_EQ(j["verdict"], "wrong_route");
  EXPECT_EQ(j["request"], 0);
  EXPECT_EQ(j["position"], 4);
  EXPECT_EQ(j["detail"], "request 0 position 4 holds the route of request 0 position 5 at weight version 0, expected the "
                         "route of request 0 position 4 at weight version 0");
  EXPECT_EQ(j["root_cause"], "decode-position");
}

TEST_F(Traces, ShrinkWritesTheSmallestTraceWithTheSameCause) {
  const fs::path src = kCorpus / "traces" / "production" / "mooncake-excerpt-sglang-4.json";
  const Ran r = run("shrink " + src.string() + " --out " + (dir_ / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(wrong_route in sglang, root cause overlap-copy-race;")) << r.out;
  const auto minimal = nlohmann::json::parse(read_file_bytes(dir_ / "out" / "mooncake-excerpt-sglang-4.min.json"));
  EXPECT_EQ(minimal["expect"], (nlohmann::json{{"impl", "sglang"}, {"verdict", "wrong_route"}}));
  EXPECT_EQ(minimal["requests"].size(), 1u);
  EXPECT_EQ(run("replay " + (dir_ / "out" / "mooncake-excerpt-sglang-4.min.json").string()).exit_code, 0);
}

TEST_F(Traces, ServingLogsBecomeTracesAndTracesConvertToBinaryAndBack) {
  const std::string seeded = (dir_ / "seeded").string(), bin = (dir_ / "bin").string(), json = (dir_ / "json").string();
  Ran r = run("seed --serving-trace " + (kCorpus / "serving-logs" / "mooncake-excerpt.jsonl").string() +
              " --profile vllm --variants 2 --out " + seeded);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "r3fuzz seed: wrote 2 trace(s) into " + seeded + "\n");
  const auto t = nlohmann::json::parse(read_file_bytes(dir_ / "seeded" / "mooncake-excerpt-vllm-1.json"));
  ASSERT_EQ(t["requests"].size(), 4u);
  // Requests 0 to 2 share the log's hash id 0: one token each, the same.
  EXPECT_EQ(t["requests"][0]["prompt"][0], t["requests"][1]["prompt"][0]);
  EXPECT_EQ(t["requests"][0]["prompt"].size(), 14u);
  EXPECT_EQ(run("replay " + seeded).exit_code, 0);

  r = run("seed --to-binary --out " + bin + " " + seeded);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run("seed --to-json --out " + json + " " + bin);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file_bytes(dir_ / "json" / "mooncake-excerpt-vllm-1.json"),
            read_file_bytes(dir_ / "seeded" / "mooncake-excerpt-vllm-1.json"));
}

TEST_F(Traces, ABadServingLogNamesTheLine) {
  const fs::path log = write("log.jsonl", "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2]}\n"
                                          "{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1]}\n");
  const Ran r = run("seed --serving-trace " + log.string() + " --out " + (dir_ / "seeded").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "r3fuzz seed: " + log.string() +
                       ": line 2: hash_ids: 1 ids for input_length 600, which is 2 blocks of 512 tokens\n");
}

TEST_F(Traces, EveryLifecycleMutantIsKilled) {
  const Ran r = run("mutants --traces --profile sglang --max-cases 200");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "result: 5 of 5 lifecycle mutants killed\n")) << r.out;
}

// vllm-legacy copies in order, so two copy-order mutants change nothing it returns: the bounded
// search proves them equivalent, and an equivalent mutant is no survivor (exit 0).
TEST_F(Traces, ACopyOrderMutantProvenEquivalentIsNoSurvivor) {
  const Ran r = run("mutants --traces --profile vllm-legacy --max-cases 100");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "result: 1 of 3 copy-order mutants killed, 2 equivalent within bounds\n")) << r.out;
}

// TensorRT-LLM's per-step capture carries none of the case mutant table's faults: the case matrix
// says so by name rather than reporting an empty kill rate; its lifecycle faults are measured.
TEST_F(Traces, TensorRtLlmsMutantsAreItsLifecycleFaults) {
  const Ran cases = run("mutants --profile trtllm");
  EXPECT_EQ(cases.exit_code, 2);
  EXPECT_EQ(cases.err,
            "r3fuzz mutants: --profile trtllm: no carrier asked for carries a fault of the mutant table under it "
            "(docs/MUTANTS.md; an engine without carriers may still have lifecycle faults: mutants --traces)\n");
  const Ran traces = run("mutants --traces --profile trtllm --max-cases 200");
  EXPECT_EQ(traces.exit_code, 0) << traces.out;
  EXPECT_TRUE(contains(traces.out, "result: 5 of 5 lifecycle mutants killed\n")) << traces.out;
  EXPECT_TRUE(contains(traces.out, "result: 3 of 3 copy-order mutants killed, 0 equivalent within bounds\n")) << traces.out;
}

// exhaust --traces --copies judges each trace once per completion order the engine's window
// allows; an implementation named alone runs under its engine's profile.
TEST_F(Traces, ExhaustWithCopiesJudgesEveryCompletionOrderUnderTheImplementationsProfile) {
  const Ran fixed = run("exhaust --traces --copies --impl trtllm-fixed --max-requests 1 --max-steps 3");
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.out,
            "trtllm-fixed: 1142 valid traces, 1824 judged (1466 with a copy landing late) (profile trtllm, <= 1 "
            "requests, <= 3 steps): no difference within bounds\n");
  const Ran released = run("exhaust --traces --copies --impl sglang --max-requests 2 --max-steps 3");
  EXPECT_EQ(released.exit_code, 1) << released.err;
  EXPECT_TRUE(contains(released.out, "sglang: 6 valid traces, 5 judged (1 with a copy landing late) (profile sglang, <= 2 "
                                     "requests, <= 3 steps): wrong_route: request 0 position 0 holds the route of "
                                     "request 0 position 1 at weight version 0")) << released.out;
  const Ran no_traces = run("exhaust --copies");
  EXPECT_EQ(no_traces.exit_code, 2);
  EXPECT_EQ(no_traces.err, "r3fuzz exhaust: --copies: needs --traces\n");
}

}  // namespace
