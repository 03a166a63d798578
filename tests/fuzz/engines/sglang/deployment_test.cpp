#include "fuzz/engines/sglang/deployment.hpp"

#include <gtest/gtest.h>

#include "fuzz/seed/engine_seed.hpp"
#include "fuzz/seed/seed.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"
#include "tests/support/deployment_text.hpp"

namespace r3 {
namespace {

// A small DP-attention deployment: 2 DP ranks of 1 TP rank, decode buckets 1 2 4, prefill 16 32.
constexpr const char* kSmall = R"({
  "format": "r3fuzz-deployment/1",
  "engine": "sglang",
  "name": "small-sglang",
  "note": "a small SGLang DP-attention deployment",
  "topology": {"dp": 2, "tp": 1, "dp_attention": true, "a2a": "none"},
  "model": {"layers": 2, "top_k": 2, "experts": 16},
  "cuda_graph": {"decode": [1, 2, 4], "prefill": [16, 32]},
  "chunked_prefill_size": 32,
  "max_running_requests": 4,
  "traffic": {"decode_requests": [1, 2], "prefill_lengths": [32]}
})";

Deployment read(const std::string& text) {
  auto d = deployment_from_json_text(text);
  EXPECT_TRUE(d) << d.error().message;
  return d ? *d : Deployment{};
}

// `text` (kSmall by default) with `key`'s value replaced (or the key added).
std::string with(const std::string& key, const std::string& value, const std::string& text = kSmall) {
  return test::with_key(text, key, value);
}

TEST(SglangDeployment, ReadsTheKnobsIntoAnSglangBaseCase) {
  const Deployment d = read(kSmall);
  EXPECT_EQ(d.engine, sglang::engine());
  EXPECT_EQ(default_profile_of(d), Profile::of(sglang::engine(), 0));
  const SglangDeployment* fields = d.fields.get<SglangDeployment>();
  ASSERT_TRUE(fields);
  const Case& base = fields->base;
  EXPECT_EQ(base.engine, sglang::engine());
  EXPECT_EQ(base.topology.dp, 2);
  EXPECT_EQ(base.layer, 1);  // the last layer
  EXPECT_EQ(base.note, "");  // the deployment's, given to each case as it is made
  EXPECT_EQ(deployment_case(d).note, "a small SGLang DP-attention deployment");
  EXPECT_EQ(deployment_case(d).engine_fields, base.engine_fields);
  EXPECT_EQ(sglang::forward_of(base)->cuda_graph->prefill, (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(fields->decode_requests, (std::pair<int64_t, int64_t>{1, 2}));
}

TEST(SglangDeployment, TrafficGivesExactlyTheseCases) {
  auto cases = cases_from_traffic(read(kSmall));
  ASSERT_TRUE(cases) << cases.error().message;
  ASSERT_EQ(cases->size(), 6u);
  // Decode targets in [1, 2]: the range ends and the buckets 1 and 2 with their neighbours.
  const std::vector<std::vector<int64_t>> requests = {{1, 0}, {2, 1}};
  for (size_t i = 0; i < 2; ++i) {
    const Case& c = (*cases)[i];
    EXPECT_EQ(sglang::forward_of(c)->kind, sglang::ForwardKind::decode);
    EXPECT_EQ(sglang::forward_of(c)->requests, requests[i]);
    EXPECT_EQ(sglang::forward_of(c)->last_decode_bucket, requests[i][0]);  // steady decoding at its own bucket
  }
  // Prefill at 32 on both ranks, then the last rank one short; each before any decode replay
  // and after a replay of the largest decode bucket.
  const std::vector<std::vector<int64_t>> tokens = {{32, 32}, {32, 32}, {32, 31}, {32, 31}};
  const std::vector<std::optional<int64_t>> last = {std::nullopt, 4, std::nullopt, 4};
  for (size_t i = 0; i < 4; ++i) {
    const Case& c = (*cases)[2 + i];
    EXPECT_EQ(sglang::forward_of(c)->kind, sglang::ForwardKind::extend);
    EXPECT_EQ(c.tokens, tokens[i]);
    EXPECT_TRUE(sglang::forward_of(c)->requests.empty());
    EXPECT_EQ(sglang::forward_of(c)->last_decode_bucket, last[i]);
  }
  for (const Case& c : *cases) EXPECT_TRUE(validate(c));
}

TEST(SglangDeployment, CasesCarryTheNoteAndMetadataLogsAreRefused) {
  const Deployment d = read(kSmall);
  auto cases = cases_from_traffic(d);
  ASSERT_TRUE(cases) << cases.error().message;
  for (const Case& c : *cases) EXPECT_EQ(c.note, "a small SGLang DP-attention deployment");
  const EngineSeed* part = engine_seed(d.engine);
  ASSERT_NE(part, nullptr);
  const std::string refusal =
      "metadata logs are vLLM's (num_tokens_across_dp, local_sizes); an SGLang deployment seeds from its traffic only";
  EXPECT_EQ(part->log_refusal(), refusal);
  std::vector<std::string> errors;
  EXPECT_TRUE(cases_from_metadata_log(d, "{\"num_tokens_across_dp\": [1, 1]}\n\n", errors).empty());
  EXPECT_EQ(errors, std::vector<std::string>{"line 1: " + refusal});
}

TEST(SglangDeployment, SpecWidthMakesDecodeTrafficVerifyForwards) {
  auto verify = cases_from_traffic(read(with("spec_width", "4")));
  ASSERT_TRUE(verify) << verify.error().message;
  EXPECT_EQ(sglang::forward_of(verify->front())->kind, sglang::ForwardKind::verify);
  EXPECT_EQ(sglang::forward_of(verify->front())->spec_width, 4);
  EXPECT_EQ(sglang::forward_of(verify->back())->kind, sglang::ForwardKind::extend);
  EXPECT_EQ(sglang::forward_of(verify->back())->spec_width, 1);
}

TEST(SglangDeployment, SeedsInsideTheProfile) {
  auto cases = cases_from_traffic(read(kSmall));
  ASSERT_TRUE(cases);
  for (const Case& c : *cases) {
    auto upstream = seed_in_profile(c, Profile::of(sglang::engine(), 0));
    ASSERT_TRUE(upstream) << upstream.error().message;
    EXPECT_EQ(upstream->profile, Profile::of(sglang::engine(), 0));
    EXPECT_EQ(sglang::forward_of(*upstream)->cuda_graph->prefill, (std::vector<int64_t>{16, 32}));  // BCG with DP attention: PR #31682
    auto miles = seed_in_profile(c, Profile::of(sglang::engine(), 1));
    ASSERT_TRUE(miles) << miles.error().message;
    EXPECT_TRUE(in_profile(*miles, Profile::of(sglang::engine(), 1)));
    // sglang-miles disables the breakable prefill graph under DP attention; decode graphs stay.
    EXPECT_TRUE(sglang::forward_of(*miles)->cuda_graph->prefill.empty());
    EXPECT_EQ(sglang::forward_of(*miles)->cuda_graph->decode, (std::vector<int64_t>{1, 2, 4}));
  }
  auto vllm = seed_in_profile(cases->front(), kDefaultProfile);
  ASSERT_FALSE(vllm);
  EXPECT_EQ(vllm.error().message,
            "is an sglang step, and profile vllm is vllm's (use a profile of the deployment's engine, or any)");
}

TEST(SglangDeployment, DefaultDecodeBucketsFollowServerArgsAndTheirAlignment) {
  // Plain decode, attn_tp 8, pool 2048: the multiples of 8 of the default list up to 512.
  const auto plain = sglang_default_decode_buckets(512, false, 8, 1, 2048);
  EXPECT_EQ(std::vector<int64_t>(plain.begin(), plain.begin() + 3), (std::vector<int64_t>{8, 16, 24}));
  EXPECT_EQ(plain.back(), 512);
  EXPECT_EQ(plain.size(), 48u);
  // Speculative, a pool of 24 requests below --cuda-graph-max-bs: the pool is the largest bucket.
  EXPECT_EQ(sglang_default_decode_buckets(256, true, 1, 4, 24),
            (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 18, 20, 22, 24}));
  // Alignment is on bs * width: with 4 tokens a request every bucket aligns to attn_tp 2.
  EXPECT_EQ(sglang_default_decode_buckets(4, true, 2, 4, 4), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(sglang_default_decode_buckets(4, true, 2, 1, 4), (std::vector<int64_t>{2, 4}));
  // A pool of 5 rounded up to 6, added where the list reaches past it.
  EXPECT_EQ(sglang_default_decode_buckets(8, false, 2, 1, 5), (std::vector<int64_t>{2, 4, 6}));

  auto d = read(with("cuda_graph", R"({"decode": "sglang-default", "decode_max_bs": 512})"));
  EXPECT_EQ(sglang::forward_of(d.fields.get<SglangDeployment>()->base)->cuda_graph->decode,
            (std::vector<int64_t>{1, 2, 4}));  // the pool of 4
}

TEST(SglangDeployment, BadFieldsAreNamed) {
  EXPECT_EQ(test::deployment_error(with("speed", "1")),
            "deployment: unknown key \"speed\" for an SGLang deployment (allowed: format, engine, name, note, topology, "
            "model, spec_width, cuda_graph, tbo, chunked_prefill_size, max_running_requests, traffic)");
  EXPECT_EQ(test::deployment_error(with("topology", R"({"dp": 1, "tp": 1, "dp_attention": true, "a2a": "none"})")),
            "topology.dp_attention: needs dp > 1 (server_args.py: DP attention runs dp > 1 attention-DP ranks)");
  EXPECT_EQ(test::deployment_error(with("topology", R"({"dp": 2, "tp": 1, "dp_attention": true, "a2a": "ucx"})")),
            "topology.a2a: \"ucx\" is not one of none, deepep, mooncake, nixl, mori, flashinfer, megamoe, pplx, "
            "ascend_fuseep");
  EXPECT_EQ(test::deployment_error(with("traffic", R"({"decode_requests": [1, 5]})")),
            "traffic.decode_requests: 5 is above max_running_requests 4 (per DP rank)");
  EXPECT_EQ(test::deployment_error(with("traffic", R"({"prefill_lengths": [33]})")),
            "traffic.prefill_lengths[0]: 33 is outside [0, 32] (chunked_prefill_size, per DP rank: a prefill chunk "
            "holds no more)");
  EXPECT_EQ(test::deployment_error(with("traffic", R"({"decode_batches": [1, 2]})")),
            "traffic: unknown key \"decode_batches\" (allowed: decode_requests, prefill_lengths)");
  EXPECT_EQ(test::deployment_error(with("cuda_graph", R"({"decode": "sglang-default"})")),
            "cuda_graph.decode_max_bs: \"decode\": \"sglang-default\" needs SGLang's --cuda-graph-max-bs, a positive "
            "integer");
  // Under TBO SGLang aligns decode buckets to 2 (the case format names the bucket).
  EXPECT_EQ(test::deployment_error(with("tbo", "true")).rfind("cuda_graph.decode[0]: 1 is not a multiple of 2", 0), 0u);
  EXPECT_EQ(test::deployment_error(R"({"format": "r3fuzz-deployment/1", "engine": "sglang", "name": "tp2-tbo",
      "topology": {"dp": 1, "tp": 2, "dp_attention": false, "a2a": "none"}, "model": {"layers": 1, "top_k": 1, "experts": 4},
      "tbo": true, "chunked_prefill_size": 32, "max_running_requests": 4, "traffic": {"prefill_lengths": [8]}})"),
            "tbo: two-batch overlap with a2a none needs DP attention; SGLang refuses to start (server_args.py, "
            "_check_two_batch_overlap)");
  EXPECT_EQ(test::deployment_error(with("max_running_requests", "0")), "max_running_requests: 0 is out of range [1, 16777216]");
  EXPECT_EQ(test::deployment_error(with("engine", "\"tgi\"")), "engine: expected \"vllm\", \"sglang\", \"trtllm\" or \"ascend\"");
}

TEST(SglangDeployment, DecodeMaxBsIsBoundedAndListsNoBucketAboveThePool) {
  // 10^12 once made SGLang's default list in full (std::bad_alloc): it is a batch size, bounded as
  // every bucket is.
  EXPECT_EQ(test::deployment_error(with("cuda_graph", R"({"decode": "sglang-default", "decode_max_bs": 1000000000000})")),
            "cuda_graph.decode_max_bs: 1000000000000 is out of range [1, 16777216] (a decode batch size, bounded as a "
            "bucket is)");
  EXPECT_EQ(test::deployment_error(with("cuda_graph", R"({"decode": "sglang-default", "decode_max_bs": 18446744073709551615})")),
            "cuda_graph.decode_max_bs: 18446744073709551615 is out of range for a 64-bit integer");
  // The largest is fine: nothing above the pool (max_running_requests 4) is listed.
  auto d = read(with("cuda_graph", R"({"decode": "sglang-default", "decode_max_bs": 16777216})"));
  EXPECT_EQ(sglang::forward_of(d.fields.get<SglangDeployment>()->base)->cuda_graph->decode,
            (std::vector<int64_t>{1, 2, 4}));
  // A pool that would keep more buckets than a case holds is refused, naming decode_max_bs.
  EXPECT_EQ(sglang_default_decode_buckets(16777216, false, 1, 1, 16777216).size(), 1025u);  // stops there
  EXPECT_EQ(test::deployment_error(with("max_running_requests", "100000",
                          with("cuda_graph", R"({"decode": "sglang-default", "decode_max_bs": 100000})"))),
            "cuda_graph.decode_max_bs: 100000 gives over 1024 decode buckets (SGLang's default list up to it or "
            "max_running_requests 100000), at most 1024 (lower it, or list the buckets)");
}

TEST(SglangDeployment, TrafficIsBoundedAndCountedAsMade) {
  // Decode graphs: each prefill length seeds four cases.
  auto d = read(kSmall);
  auto cases = cases_from_traffic(d);
  ASSERT_TRUE(cases);
  EXPECT_EQ(count_traffic_cases(d), static_cast<int64_t>(cases->size()));
  std::string lengths = "[";
  for (int i = 0; i < 4096; ++i) lengths += (i ? ", " : "") + std::to_string(i % 33);
  lengths += "]";
  // 4096 lengths and 2 decode steps: 16386 cases.
  EXPECT_EQ(test::deployment_error(with("traffic", R"({"decode_requests": [1, 2], "prefill_lengths": )" + lengths + "}")),
            "traffic: seeds 16386 cases (2 decode and 16384 prefill steps), at most 16384 (fewer prefill_lengths, or a "
            "narrower decode range)");
  auto fits = read(with("traffic", R"({"prefill_lengths": )" + lengths + "}"));
  EXPECT_EQ(count_traffic_cases(fits), 16384);
  // Without decode graphs two a length.
  auto eager = read(with("cuda_graph", R"({"prefill": [16, 32]})"));
  auto eager_cases = cases_from_traffic(eager);
  ASSERT_TRUE(eager_cases);
  EXPECT_EQ(count_traffic_cases(eager), static_cast<int64_t>(eager_cases->size()));
  EXPECT_EQ(test::deployment_error(with("traffic", R"({"decode_requests": [1, 2, 3]})")),
            "traffic.decode_requests: 3 entries, at most 2 (expected [lo, hi])");
}

}  // namespace
}  // namespace r3
