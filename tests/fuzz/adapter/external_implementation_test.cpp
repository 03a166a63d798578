// external:COMMAND end to end: real child processes, the example Python adapter, and an
// adapter that misbehaves in each way the protocol names. Each failure must be an Error
// with the exact text, the child must be gone, and the next case must start a fresh one.
#include "fuzz/adapter/external_implementation.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include "fuzz/campaign/campaign.hpp"
#include "fuzz/oracle/judge.hpp"
#include "fuzz/oracle/policy_implementation.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"
#include "tests/support/case_fixtures.hpp"
#include "tests/support/sglang_fixtures.hpp"

namespace r3 {
namespace {

const std::string kSource = R3FUZZ_SOURCE_DIR;
const std::string kGoodAdapter = "python3 " + kSource + "/examples/python/vllm_50874_adapter.py";

std::string misbehaving(const std::string& mode, int n) {
  return "python3 " + kSource + "/tests/fuzz/adapter/misbehaving_adapter.py " + mode + " " + std::to_string(n);
}

using test::make_case;

// DP [2, 3] on the naive gathered path: two ranks, so two requests per case.
Case two_ranks() { return make_case({2, 1, false, false}, 8, {2, 3}, Path::gathered); }
Case one_rank() { return make_case({1, 1, false, false}, 4, {3}, Path::single); }

ExternalImplementation external(const std::string& command, int timeout_ms = 5000) {
  ExternalOptions o;
  o.command = command;
  o.timeout = std::chrono::milliseconds(timeout_ms);
  return ExternalImplementation(o);
}

Judgement run_and_judge(const Implementation& impl, const Case& c) {
  const Step step = derive_step(c).value();
  auto outcome = impl.run_concrete(c, step);
  EXPECT_TRUE(outcome.ok()) << outcome.error().message;
  return judge_concrete(c, step, *outcome, impl.name());
}

std::string run_error(const Implementation& impl, const Case& c) {
  auto outcome = impl.run_concrete(c, derive_step(c).value());
  return outcome.ok() ? std::string("(no error)") : outcome.error().message;
}

TEST(ExternalImplementation, HelloNamesTheAdapterAndItsReplaySizing) {
  auto impl = external(kGoodAdapter);
  ASSERT_TRUE(impl.connect().ok());
  ASSERT_TRUE(impl.hello().has_value());
  EXPECT_EQ(impl.hello()->name, "vllm-50874 (python)");
  EXPECT_EQ(impl.hello()->version, "1");
  EXPECT_EQ(impl.hello()->replay_rows, ReplaySizing::dispatch_group);
  EXPECT_EQ(impl.name(), "external:" + kGoodAdapter);
  const Case c = make_case({2, 2, true, true}, 8, {5, 3}, Path::gathered, true);
  EXPECT_EQ(impl.allocate(c).replay_rows, 32);  // M * D * T under EP
}

// The case's engine says how a step travels: an SGLang step needs an adapter whose hello lists
// "sglang" (fuzz/engines/sglang/adapter.cpp), and is refused before any request is sent.
TEST(ExternalImplementation, AnEngineTheHelloDoesNotListIsRefused) {
  auto impl = external(kGoodAdapter);
  EXPECT_TRUE(impl.serves(sglang::engine()));  // before the hello: every engine
  ASSERT_TRUE(impl.connect().ok());
  EXPECT_TRUE(impl.serves(vllm::engine()));
  EXPECT_FALSE(impl.serves(sglang::engine()));
  const Case c = test::sglang_case(2, 1, sglang::A2a::none, sglang::ForwardKind::decode, {2, 1});
  EXPECT_EQ(run_error(impl, c), "the adapter's hello does not list \"sglang\" in \"engines\"");
  EXPECT_EQ(impl.starts(), 1);  // not a failure of the adapter: it keeps running
  EXPECT_EQ(run_and_judge(impl, one_rank()).verdict, Verdict::pass);
}

TEST(ExternalImplementation, PythonAdapterMatchesTheModelOnUpstreamVectors) {
  auto impl = external(kGoodAdapter);
  const PolicyImplementation model(make_vllm_50874_policy());
  // vLLM's upstream vectors: naive gathered DP [2, 3]; gathered SP shards [3, 2] with T = 2;
  // SP shards of [2, 3] with T = 2 (TP all-gather); plus heavy padding near capacity.
  const std::vector<Case> cases = {
      make_case({2, 1, false, false}, 8, {2, 3}, Path::gathered, true),
      make_case({2, 2, true, true}, 8, {3, 2}, Path::gathered, true),
      make_case({2, 2, true, true}, 8, {2, 3}, Path::sp_shard),
      make_case({2, 2, true, true}, 4, {1, 4}, Path::sp_shard),
      make_case({3, 2, true, false}, 5, {5, 0, 1}, Path::local),
  };
  for (const Case& c : cases) {
    const Judgement got = run_and_judge(impl, c);
    const Judgement want = run_and_judge(model, c);
    EXPECT_EQ(to_string(got.verdict), to_string(want.verdict)) << want.detail;
    EXPECT_EQ(got.branch, want.branch);
    EXPECT_EQ(got.detail, want.detail);
    const std::vector<RankJudgement> got_ranks = rank_by_rank(got), want_ranks = rank_by_rank(want);
    ASSERT_EQ(got_ranks.size(), want_ranks.size());
    for (size_t r = 0; r < got_ranks.size(); ++r) {
      EXPECT_EQ(got_ranks[r].branches, want_ranks[r].branches);
      EXPECT_EQ(got_ranks[r].tp_gathers, want_ranks[r].tp_gathers);
    }
  }
  EXPECT_EQ(impl.starts(), 1);
}

TEST(ExternalImplementation, CornerCaseTwoIsLatentThroughThePythonAdapterToo) {
  auto impl = external(kGoodAdapter);
  // n_d = 1 with SP: the one-row shard takes branch local on every TP rank; tp 1 captures padding.
  const Judgement j = run_and_judge(impl, make_case({2, 2, true, true}, 4, {1, 2}, Path::sp_shard));
  EXPECT_EQ(j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(j.severity, Severity::latent);
  EXPECT_EQ(j.detail, "buffer row 0 of dp 0 tp 1 holds SP padding row 1 of dp 0, expected token (0, 0)");
}

TEST(ExternalImplementation, RejectionIsAnErrorStringNotAnAdapterFailure) {
  auto impl = external(kGoodAdapter);
  Case c = make_case({2, 1, false, false}, 8, {2, 3}, Path::gathered);
  // Wrong counts and no local_sizes: 5 gathered rows match no branch, so every rank raises.
  c.metadata = MetadataOverride{std::vector<int64_t>{2, 4}, true, std::nullopt};
  const Judgement j = run_and_judge(impl, c);
  EXPECT_EQ(j.verdict, Verdict::pass);  // the reference rejects, and so did every rank
  for (const RankJudgement& r : rank_by_rank(j)) EXPECT_TRUE(r.rejected);
}

TEST(ExternalImplementation, RowsWrittenPastTheBufferAreAnOverflow) {
  auto impl = external(misbehaving("overflow", 1));
  const Judgement j = run_and_judge(impl, one_rank());
  EXPECT_EQ(j.verdict, Verdict::overflow);
  EXPECT_EQ(j.detail, "capture buffer of dp 0 tp 0: 2 rows written past its end (it holds 4 rows)");
}

struct Misbehaviour {
  std::string mode;
  std::string error;
};

class AdapterFailure : public testing::TestWithParam<Misbehaviour> {};

TEST_P(AdapterFailure, IsAnErrorQuotingTheLineAndTheNextCaseRestartsTheAdapter) {
  // Generous enough for a loaded machine to answer request 1; "sleep" sleeps 30 s.
  auto impl = external(misbehaving(GetParam().mode, 2), 2000);
  EXPECT_EQ(run_error(impl, two_ranks()), GetParam().error);
  EXPECT_EQ(impl.starts(), 1);
  // The campaign goes on: a fresh adapter answers the next case (one request: before its Nth).
  const Judgement j = run_and_judge(impl, one_rank());
  EXPECT_EQ(j.verdict, Verdict::pass) << j.detail;
  EXPECT_EQ(impl.starts(), 2);
}

INSTANTIATE_TEST_SUITE_P(
    Protocol, AdapterFailure,
    testing::Values(
        Misbehaviour{"sleep", "no reply to request 2 within 2 s"},
        Misbehaviour{"garbage", "the reply to request 2 is not JSON: \"this is not json\""},
        Misbehaviour{"wrong_id", "the reply to request 2 carries id 99: \"{\\\"id\\\": 99, \\\"rows\\\": []}\""},
        Misbehaviour{"exit", "the adapter exited with status 3 before replying to request 2"},
        Misbehaviour{"partial",
                     "the adapter exited with status 4 before replying to request 2; its unfinished line: "
                     "\"{\\\"id\\\": 2, \\\"ro\""},
        Misbehaviour{"short_row",
                     "the reply to request 2: rows[0].values: expected a list of 2 integers (top_k), got 1 entries: "
                     "\"{\\\"id\\\": 2, \\\"rows\\\": [{\\\"dst_row\\\": 0, \\\"values\\\": [1]}]}\""}),
    [](const testing::TestParamInfo<Misbehaviour>& info) { return info.param.mode; });

// The batched exchange: the same adapter with and without batches, replying with copies or
// with rows, judges the same, and the hello of each says which exchange it speaks.
TEST(ExternalImplementation, BatchedAndUnbatchedExchangesJudgeAlike) {
  auto batched = external(kGoodAdapter);
  auto unbatched = external(kGoodAdapter + " --no-batch");
  auto unbatched_rows = external(kGoodAdapter + " --no-batch --rows");
  auto batched_rows = external(kGoodAdapter + " --rows");
  ASSERT_TRUE(batched.connect().ok());
  ASSERT_TRUE(unbatched.connect().ok());
  EXPECT_TRUE(batched.hello()->batch);
  EXPECT_FALSE(unbatched.hello()->batch);
  // Micro-batches and DP chunking (two calls per rank each) beside one call of four ranks.
  Case micro = make_case({2, 1, false, false}, 8, {3, 2}, Path::gathered, true);
  micro.padding.mode = PaddingMode::dp_max;
  micro.microbatches = 2;
  Case chunked = make_case({2, 2, true, true}, 8, {5, 3}, Path::sp_shard);
  chunked.dp_chunk = 2;
  ASSERT_EQ(derive_step(micro).value().calls.size(), 2u);
  ASSERT_EQ(derive_step(chunked).value().calls.size(), 2u);  // ceil(ceil(5 / 2) / 2) chunks
  for (const Case& c : {make_case({2, 2, true, true}, 8, {2, 3}, Path::sp_shard), micro, chunked,
                        make_case({2, 2, true, true}, 4, {1, 2}, Path::sp_shard)}) {
    const Judgement a = run_and_judge(batched, c);
    for (const ExternalImplementation* other : {&unbatched, &unbatched_rows, &batched_rows}) {
      const Judgement b = run_and_judge(*other, c);
      EXPECT_EQ(to_string(a.verdict), to_string(b.verdict)) << other->name();
      EXPECT_EQ(a.branch, b.branch);
      EXPECT_EQ(a.detail, b.detail);
      const std::vector<RankJudgement> a_ranks = rank_by_rank(a), b_ranks = rank_by_rank(b);
      ASSERT_EQ(a_ranks.size(), b_ranks.size());
      for (size_t r = 0; r < a_ranks.size(); ++r) {
        EXPECT_EQ(a_ranks[r].branches, b_ranks[r].branches);
        EXPECT_EQ(a_ranks[r].tp_gathers, b_ranks[r].tp_gathers);
      }
    }
  }
  for (const ExternalImplementation* impl : {&batched, &unbatched, &unbatched_rows, &batched_rows})
    EXPECT_EQ(impl->starts(), 1) << impl->name();
}

class BatchedAdapterFailure : public testing::TestWithParam<Misbehaviour> {};

// A batched adapter that lies about its batch: the case is an adapter_error naming what is
// wrong, the adapter is restarted for the next case, and ids go on counting across batches.
TEST_P(BatchedAdapterFailure, IsAnErrorForTheCaseAndTheNextCaseRestartsTheAdapter) {
  auto impl = external(misbehaving(GetParam().mode, 2), 2000);
  EXPECT_EQ(run_and_judge(impl, one_rank()).verdict, Verdict::pass);  // batch [1]
  EXPECT_EQ(run_error(impl, two_ranks()), GetParam().error);        // batch [2..3]
  EXPECT_EQ(impl.starts(), 1);
  const Judgement j = run_and_judge(impl, one_rank());  // batch [4], a fresh adapter's first
  EXPECT_EQ(j.verdict, Verdict::pass) << j.detail;
  EXPECT_EQ(impl.starts(), 2);
}

INSTANTIATE_TEST_SUITE_P(
    Protocol, BatchedAdapterFailure,
    testing::Values(
        Misbehaviour{"batch_count",
                     "the reply to batch [2..3]: replies: expected 2 replies (one per reques"
                     "t, in order), got 3: \"{\\\"replies\\\": [{\\\"id\\\": 2, \\\"branch\\\": \\\"naive_total\\\", "
                     "\\\"copies\\\": [{\\\"dst_row\\\": 0, \\\"src_row\\\": 0, \\\"rows\\\": 2, \\\"from_tp_gather"
                     "\\\": false}], \\\"tp_all_gather\\\": false}, {\\\"id\\\": 3, \\\"branch\\\": \\\"naive_total"
                     "\\\", \\\"copies\\\": [{\\\"d...\" (427 bytes)"},
        Misbehaviour{"batch_order",
                     "the reply to batch [2..3]: replies[0] carries id 3, expected 2 (replie"
                     "s come in request order): \"{\\\"replies\\\": [{\\\"id\\\": 3, \\\"branch\\\": \\\"naive_total"
                     "\\\", \\\"copies\\\": [{\\\"dst_row\\\": 0, \\\"src_row\\\": 2, \\\"rows\\\": 3, \\\"from_tp_gat"
                     "her\\\": false}], \\\"tp_all_gather\\\": false}, {\\\"id\\\": 2, \\\"branch\\\": \\\"naive_total"
                     "\\\", \\\"copies\\\": [{\\\"d...\" (289 bytes)"},
        Misbehaviour{"batch_short",
                     "the reply to batch [2..3]: replies: expected 2 replies (one per reques"
                     "t, in order), got 1: \"{\\\"replies\\\": [{\\\"id\\\": 2, \\\"branch\\\": \\\"naive_total\\\", "
                     "\\\"copies\\\": [{\\\"dst_row\\\": 0, \\\"src_row\\\": 0, \\\"rows\\\": 2, \\\"from_tp_gather"
                     "\\\": false}], \\\"tp_all_gather\\\": false}]}\""},
        Misbehaviour{"batch_cut",
                     "the adapter exited with status 4 before replying to batch [2..3]; its "
                     "unfinished line: \"{\\\"replies\\\": [{\\\"id\\\": 2, \\\"branch\\\": \\\"naive_total\\\", \\\"c"
                     "opies\\\": [{\\\"dst_row\\\": 0, \\\"src_row\\\": 0, \\\"rows\\\": 2, \\\"from_tp_gather\\\": fa"
                     "lse}], \\\"tp_all_gather\\\": f\""},
        Misbehaviour{"batch_sleep", "no reply to batch [2..3] within 2 s"}),
    [](const testing::TestParamInfo<Misbehaviour>& info) { return info.param.mode; });

TEST(ExternalImplementation, RequestIdsKeepCountingAcrossRestarts) {
  auto impl = external(misbehaving("garbage", 1), 2000);
  EXPECT_EQ(run_error(impl, one_rank()), "the reply to request 1 is not JSON: \"this is not json\"");
  EXPECT_EQ(run_error(impl, one_rank()), "the reply to request 2 is not JSON: \"this is not json\"");
  EXPECT_EQ(impl.starts(), 2);
}

TEST(ExternalImplementation, ProtocolMismatchIsNamedInTheHello) {
  auto impl = external(misbehaving("old_protocol", 1));
  const Status s = impl.connect();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "hello: the adapter speaks protocol \"r3fuzz-adapter/0\", r3fuzz speaks \"r3fuzz-adapter/1\": "
            "\"{\\\"type\\\": \\\"hello\\\", \\\"protocol\\\": \\\"r3fuzz-adapter/0\\\", \\\"name\\\": "
            "\\\"misbehaving\\\", \\\"version\\\": \\\"old_protocol\\\"}\"");
}

TEST(ExternalImplementation, ACommandThatDoesNotExistFailsAtTheHello) {
  ExternalOptions o;
  o.command = "r3fuzz-no-such-adapter-command";
  o.stderr_log = "/dev/null";
  ExternalImplementation impl(o);
  const Status s = impl.connect();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "the adapter exited with status 127 before replying to the hello");
}

TEST(ExternalImplementation, LongLinesAreCutWhenQuoted) {
  EXPECT_EQ(quote_line("abc"), "\"abc\"");
  EXPECT_EQ(quote_line(std::string(300, 'x'), 4), "\"xxxx...\" (300 bytes)");
  EXPECT_EQ(quote_line("tab\there"), "\"tab\\there\"");
}

}  // namespace
}  // namespace r3

namespace r3 {
namespace {

// A whole campaign over an adapter that dies on every 30th request of each life: the failing
// cases are adapter_error with the exact text, every other case is judged, and each failure
// costs one restart (made lazily, when the next case needs the adapter).
TEST(ExternalImplementationInACampaign, AdapterFailuresAreVerdictsAndTheCampaignGoesOn) {
  CampaignOptions options;
  options.seed = 7;
  options.max_cases = 100;
  options.mode = Mode::concrete;
  options.out_dir = "";
  std::vector<std::unique_ptr<Implementation>> impls;
  ExternalOptions o;
  o.command = misbehaving("exit", 30);
  auto owned = std::make_unique<ExternalImplementation>(o);
  const ExternalImplementation* adapter = owned.get();
  impls.push_back(std::move(owned));
  const CampaignReport report = run_campaign(options, impls).value();
  EXPECT_EQ(report.cases, 100);
  const auto& verdicts = report.distribution.verdict.at(adapter->name());
  ASSERT_TRUE(verdicts.count("adapter_error (failure)"));
  ASSERT_TRUE(verdicts.count("pass"));
  const int64_t failures = verdicts.at("adapter_error (failure)");
  EXPECT_GE(failures, 3);
  EXPECT_GE(adapter->starts(), failures);  // equal when the last case was one of them
  EXPECT_LE(adapter->starts(), failures + 1);
  const Failure* finding = nullptr;
  for (const Failure& f : report.failures)
    if (f.signature.verdict == Verdict::adapter_error) finding = &f;
  ASSERT_NE(finding, nullptr);
  const std::string head = adapter->name() + " failed to run: the adapter exited with status 3 before replying to request ";
  EXPECT_EQ(finding->detail.rfind(head, 0), 0u) << finding->detail;
  EXPECT_EQ(finding->detail.find_first_not_of("0123456789", head.size()), std::string::npos) << finding->detail;
}

}  // namespace
}  // namespace r3
