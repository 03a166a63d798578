// SGLang requests carry what SGLang's capture and window read; a reply's published rows become
// the image the concrete judge reads, stale rows untouched. The issue's verify-graph case
// (issue 19) throughout: dp 2, tp 2, DP attention, requests [2, 1], w 4, decode bucket 2.
#include "fuzz/engines/sglang/protocol.hpp"

#include <gtest/gtest.h>

#include "fuzz/adapter/engine_adapter.hpp"
#include "fuzz/adapter/protocol.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/oracle/judge.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/provenance.hpp"

namespace r3 {
namespace {

using nlohmann::json;

Case issue_case() {
  return case_from_json_text(
             R"({"format":"r3fuzz-case/1","engine":"sglang","topology":{"dp":2,"tp":2,"dp_attention":true,"a2a":"none"},)"
             R"("model":{"layers":2,"top_k":2,"experts":16},"forward":"verify","requests":[2,1],"spec_width":4,)"
             R"("cuda_graph":{"decode":[2,4],"prefill":[16,32]},"last_decode_bucket":2,"tbo":false,)"
             R"("chunked_prefill_size":16,"max_running_requests":4,"layer":0,"profile":"sglang"})")
      .value();
}

json token_row(int dp, int64_t j) {
  return {routing_value({RowKind::token, dp, j}, 0), routing_value({RowKind::token, dp, j}, 1)};
}

// Published rows [first, first + n) of dp `from`'s tokens, as a window starting there reads them.
json rows_of(int from, int64_t first, int64_t n) {
  json rows = json::array();
  for (int64_t j = first; j < first + n; ++j) rows.push_back(token_row(from, j));
  return rows;
}

TEST(SglangProtocol, RequestCarriesTheCallsAndTheWindowInputs) {
  const Case c = issue_case();
  const Step step = derive_step(c).value();
  const json req = sglang_request_fields(3, c, step, 1, 0);
  EXPECT_EQ(req["engine"], "sglang");
  EXPECT_EQ(req["rank"], (json{{"dp", 1}, {"tp", 0}}));
  EXPECT_EQ(req["attn_tp_size"], 2);
  EXPECT_EQ(req["attn_tp_rank"], 0);
  EXPECT_EQ(req["a2a"], "none");
  EXPECT_FALSE(req.contains("case"));
  // The graph pads both ranks to bs*w = 8 rows; the gathered tensor holds dp 0's 8 rows, then dp 1's.
  ASSERT_EQ(req["calls"].size(), 1u);
  const json& call = req["calls"][0];
  EXPECT_EQ(call["dp_local_start"], 8);
  EXPECT_EQ(call["dp_local_num_tokens"], 8);
  EXPECT_EQ(call["batch_offset"], 0);
  ASSERT_EQ(call["topk_ids"].size(), 16u);
  EXPECT_EQ(call["topk_ids"][0], token_row(0, 0));
  EXPECT_EQ(call["topk_ids"][8], token_row(1, 0));
  EXPECT_FALSE(call.contains("attn_tp_all_gather"));  // a2a none: nothing scattered over attn-TP
  // A replay keeps the raw counts (8 and 4 tokens); the runner's bs is the replayed bucket.
  EXPECT_EQ(req["forward_batch"],
            (json{{"forward_mode", "target_verify"}, {"global_num_tokens_cpu", {8, 4}}, {"out_cache_loc", 4},
                  {"real_tokens", 4}}));
  EXPECT_EQ(req["can_run_graph"], true);
  EXPECT_EQ(req["decode_cuda_graph_runner"], (json{{"bs", 2}, {"captured_req_width", 4}}));
  EXPECT_EQ(req["server_args"]["chunked_prefill_size"], 16);
  EXPECT_EQ(req["server_args"]["max_running_requests"], 4);
}

TEST(SglangProtocol, DeepepRequestCarriesTheAttnTpGather) {
  Case c = issue_case();
  sglang::forward_of(c)->a2a = sglang::A2a::deepep;
  sglang::forward_of(c)->dp_attention = false;
  c.topology.dp = 1;
  sglang::forward_of(c)->requests = {2};
  const Step step = derive_step(c).value();
  const json req = sglang_request_fields(1, c, step, 0, 1);
  // The bucket-2 graph pads to 8 rows; tp 1 holds rows [4, 8), the gather all 8.
  const json& call = req["calls"][0];
  EXPECT_EQ(call["topk_ids"], rows_of(0, 4, 4));
  EXPECT_EQ(call["attn_tp_all_gather"], rows_of(0, 0, 8));
}

std::vector<SglangReply> replies(const Case& c, const std::vector<json>& rows) {
  std::vector<SglangReply> out;
  for (size_t r = 0; r < rows.size(); ++r) {
    const json reply = {{"id", r + 1}, {"buffer_rows", 32}, {"rows", rows[r]}, {"branch", "window_graph"}};
    out.push_back(read_sglang_reply(reply, c.model.top_k).value());
  }
  return out;
}

TEST(SglangProtocol, PublishedRowsAreJudgedRowByRow) {
  const Case c = issue_case();
  const Step step = derive_step(c).value();
  // Every rank published its own tokens: pass.
  const json dp0 = rows_of(0, 0, 8), dp1 = rows_of(1, 0, 4);
  Judgement ok = judge_concrete(c, step, sglang_outcome(c, step, replies(c, {dp0, dp0, dp1, dp1})).value(), "x");
  EXPECT_EQ(ok.verdict, Verdict::pass);
  EXPECT_EQ(ok.allocation.capture_rows, 16);  // the 32 rows said, judged in the 16 the case can use
  // Upstream's window on dp 1 starts at dp_rank * bs = 2: dp 0's rows 2..5.
  const json upstream = rows_of(0, 2, 4);
  Judgement bad = judge_concrete(c, step, sglang_outcome(c, step, replies(c, {dp0, dp0, upstream, upstream})).value(), "x");
  EXPECT_EQ(bad.verdict, Verdict::wrong_rows);
  EXPECT_EQ(bad.severity, Severity::failure);
  EXPECT_EQ(bad.branch, "window_graph");
  EXPECT_EQ(bad.detail, "buffer row 0 of dp 1 tp 0 holds token (0, 2), expected token (1, 0)");
  // A window that read rows no call wrote (-1: stale) leaves those published rows untouched.
  const json stale = {token_row(1, 0), {-1, -1}, token_row(1, 2), token_row(1, 3)};
  Judgement gap = judge_concrete(c, step, sglang_outcome(c, step, replies(c, {dp0, dp0, stale, stale})).value(), "x");
  EXPECT_EQ(gap.detail, "buffer row 1 of dp 1 tp 0 holds an untouched row, expected token (1, 1)");
}

TEST(SglangProtocol, ErrorReplyRejectsTheForward) {
  const Case c = issue_case();
  const Step step = derive_step(c).value();
  const json dp0 = rows_of(0, 0, 8), dp1 = rows_of(1, 0, 4);
  std::vector<SglangReply> r = replies(c, {dp0, dp0, dp1, dp1});
  r[2] = read_sglang_reply(json{{"id", 3}, {"buffer_rows", 32}, {"error", "TypeError: boom"}}, 2).value();
  const Judgement j = judge_concrete(c, step, sglang_outcome(c, step, r).value(), "x");
  EXPECT_EQ(j.verdict, Verdict::spurious_reject);
  EXPECT_EQ(j.branch, "error");
  EXPECT_EQ(j.detail, "dp 1 tp 0 raised on a valid case: TypeError: boom");
}

TEST(SglangProtocol, RepliesAreReadStrictly) {
  auto error_of = [](const json& reply) { return read_sglang_reply(reply, 2).error().message; };
  EXPECT_EQ(error_of(json{{"id", 1}, {"rows", json::array()}}),
            "missing \"buffer_rows\" (the rows of the capturer's device buffer)");
  EXPECT_EQ(error_of(json{{"id", 1}, {"buffer_rows", 4}}), "expected exactly one of \"rows\" or \"error\"");
  EXPECT_EQ(error_of(json{{"id", 1}, {"buffer_rows", 4}, {"rows", {{-1, 7}}}}),
            "rows[0]: mixes negative (stale) and routed values");
  EXPECT_EQ(error_of(json{{"id", 1}, {"buffer_rows", 4}, {"rows", {{1}}}}),
            "rows[0]: expected a list of 2 integers (top_k), got 1 entries");
  EXPECT_EQ(error_of(json{{"id", 1}, {"buffer_rows", 4}, {"rows", json::array()}, {"copies", 1}}),
            "unknown key \"copies\" (allowed: id, buffer_rows, rows, error, branch, window)");
  const Case c = issue_case();
  const Step step = derive_step(c).value();
  std::vector<SglangReply> r = replies(c, {json::array(), json::array(), json::array(), json::array()});
  r[3].buffer_rows = 16;
  EXPECT_EQ(sglang_outcome(c, step, r).error().message,
            "dp 1 tp 1 says buffer_rows 16, dp 0 tp 0 says 32 (every rank allocates the same buffer)");
}

// buffer_rows sizes nothing past what the case can use: 2^40 rows are judged as the rows the
// judge can tell apart (here 16: dp 0's verify graph pads to 8 rows a rank, the gathered tensor
// of the capture call holds both ranks'), with the verdicts and details of the whole buffer.
TEST(SglangProtocol, AHugeBufferIsJudgedInTheRowsTheCaseUses) {
  const Case c = issue_case();
  const Step step = derive_step(c).value();
  const json dp0 = rows_of(0, 0, 8), dp1 = rows_of(1, 0, 4), upstream = rows_of(0, 2, 4);
  auto with_buffer = [&](int64_t rows, const std::vector<json>& published) {
    std::vector<SglangReply> r = replies(c, published);
    for (SglangReply& reply : r) reply.buffer_rows = rows;
    return sglang_outcome(c, step, r).value();
  };
  const ConcreteOutcome huge = with_buffer(int64_t{1} << 40, {dp0, dp0, dp1, dp1});
  EXPECT_EQ(huge.allocation.capture_rows, step.capture_rows_needed);
  EXPECT_EQ(step.capture_rows_needed, 16);
  EXPECT_EQ(huge.ranks[0].capture.rows, 16);
  EXPECT_EQ(judge_concrete(c, step, huge, "x").verdict, Verdict::pass);
  const Judgement big = judge_concrete(c, step, with_buffer(int64_t{1} << 40, {dp0, dp0, upstream, upstream}), "x");
  const Judgement small = judge_concrete(c, step, with_buffer(32, {dp0, dp0, upstream, upstream}), "x");
  EXPECT_EQ(big.verdict, Verdict::wrong_rows);
  EXPECT_EQ(big.detail, small.detail);
  EXPECT_EQ(big.detail, "buffer row 0 of dp 1 tp 0 holds token (0, 2), expected token (1, 0)");
  // A buffer below the rows a call writes is still a capacity failure, with the adapter's count.
  const Judgement short_buffer = judge_concrete(c, step, with_buffer(15, {dp0, dp0, dp1, dp1}), "x");
  EXPECT_EQ(short_buffer.verdict, Verdict::capacity);
  EXPECT_EQ(short_buffer.detail, "capture buffer has 15 rows, a capture call writes 16 rows");
}

TEST(SglangProtocol, ARankPublishesAtMostItsKvSlots) {
  const Case c = issue_case();
  const Step step = derive_step(c).value();
  // dp 1 has 4 KV slots (requests 1, w 4).
  const std::vector<SglangReply> r = replies(c, {rows_of(0, 0, 8), rows_of(0, 0, 8), rows_of(1, 0, 5), rows_of(1, 0, 4)});
  EXPECT_EQ(sglang_outcome(c, step, r).error().message,
            "dp 1 tp 0: rows: 5 published rows, more than the rank's 4 KV slots (forward_batch.out_cache_loc)");
}

TEST(SglangProtocol, ErrorAndBranchTextsAreStoredCut) {
  const SglangReply r =
      read_sglang_reply(json{{"id", 1}, {"buffer_rows", 4}, {"error", std::string(30000000, 'E')}}, 2).value();
  EXPECT_EQ(r.error, std::string(kMaxStoredReplyTextBytes, 'E') + "... (30000000 bytes in all)");
  const json long_branch = {{"id", 1}, {"buffer_rows", 4}, {"rows", json::array()}, {"branch", std::string(100000, 'b')}};
  EXPECT_EQ(read_sglang_reply(long_branch, 2).error().message, "branch: expected 1 to 64 characters");
}

TEST(SglangProtocol, HelloDeclaresTheEngines) {
  const json base = {{"protocol", "r3fuzz-adapter/1"}, {"name", "a"}};
  const AdapterHello plain = read_hello(base).value();
  EXPECT_TRUE(plain.serves(vllm::engine()));
  EXPECT_FALSE(plain.serves(sglang::engine()));
  json both = base;
  both["engines"] = {"sglang"};
  const AdapterHello sg = read_hello(both).value();
  EXPECT_FALSE(sg.serves(vllm::engine()));
  EXPECT_TRUE(sg.serves(sglang::engine()));
  both["engines"] = {"sglang", "vllm", "sglang"};
  EXPECT_EQ(read_hello(both).value().engines, (std::vector<Engine>{sglang::engine(), vllm::engine()}));
  both["engines"] = {"tgi"};
  EXPECT_EQ(read_hello(both).error().message, "hello.engines[0]: \"tgi\" is not one of vllm, sglang, trtllm, ascend");
  both["engines"] = json::array();
  EXPECT_EQ(read_hello(both).error().message, "hello.engines: expected a non-empty list of \"vllm\", \"sglang\", \"trtllm\" and \"ascend\"");
}

// The robustness target reads SGLang's replies through the engine's adapter part.
TEST(SglangProtocol, TheAdapterPartReadsRepliesForFuzzing) {
  const EngineAdapter* part = engine_adapter(sglang::engine());
  ASSERT_NE(part, nullptr);
  const BufferShape buffer{16, 2, 2};
  const auto texts = part->read_reply_for_fuzzing(json{{"id", 1}, {"buffer_rows", 4}, {"error", "boom"}}, buffer);
  ASSERT_TRUE(texts) << texts.error().message;
  EXPECT_EQ(texts->error, "boom");
  EXPECT_EQ(texts->branch, "error");
  EXPECT_EQ(part->read_reply_for_fuzzing(json{{"id", 1}, {"rows", json::array()}}, buffer).error().message,
            "missing \"buffer_rows\" (the rows of the capturer's device buffer)");
  // vLLM's steps travel as capture requests: its part reads a capture reply.
  const auto capture = engine_adapter(vllm::engine())->read_reply_for_fuzzing(json{{"id", 1}, {"rows", json::array()}}, buffer);
  ASSERT_TRUE(capture) << capture.error().message;
  EXPECT_EQ(capture->branch, "unnamed");
}

}  // namespace
}  // namespace r3
