// Requests carry exactly what one rank's capture() sees; replies are read strictly, each
// error naming its field.
#include "fuzz/adapter/protocol.hpp"

#include <gtest/gtest.h>

#include "reference/provenance.hpp"

namespace r3 {
namespace {

using nlohmann::json;

Case sp_case(Path path) {
  Case c;
  c.topology = {2, 2, true, true};
  c.model = {4, 2, 64};
  c.max_num_tokens = 8;
  c.tokens = {3, 2};
  c.path = path;
  c.layer = 1;
  return c;
}

int32_t token(int dp, int64_t j, int k) { return routing_value({RowKind::token, dp, j}, k); }
int32_t pad(int dp, int64_t j, int k) { return routing_value({RowKind::sp_padding, dp, j}, k); }

TEST(Protocol, SpShardRequestCarriesTheShardAndTheTpGather) {
  const Case c = sp_case(Path::sp_shard);
  const Step step = derive_step(c).value();
  const Call& call = step.calls.front();
  // dp 1 tp 1: n_1 = 2, s_1 = 1, so this rank holds token (1, 1); the gather is both shards.
  const json req = capture_request(7, json{{"k", "case"}}, step, call, call.view(3), {8, 4, 2});
  EXPECT_EQ(req["type"], "capture");
  EXPECT_EQ(req["id"], 7);
  EXPECT_EQ(req["case"], (json{{"k", "case"}}));
  EXPECT_EQ(req["rank"], (json{{"dp", 1}, {"tp", 1}}));
  EXPECT_EQ(req["dp_size"], 2);
  EXPECT_EQ(req["tp_size"], 2);
  EXPECT_EQ(req["layer"], 1);
  EXPECT_EQ(req["capture_buffer"], (json{8, 4, 2}));
  EXPECT_EQ(req["call"], (json{{"index", 0}, {"count", 1}, {"row_offset", 0}, {"chunk_size", nullptr}}));
  EXPECT_EQ(req["dp_metadata"], (json{{"num_tokens_across_dp", {3, 2}}, {"local_sizes", {2, 2, 1, 1}}}));
  EXPECT_EQ(req["topk_ids"], (json{{token(1, 1, 0), token(1, 1, 1)}}));
  EXPECT_EQ(req["tp_all_gather"], (json{{token(1, 0, 0), token(1, 0, 1)}, {token(1, 1, 0), token(1, 1, 1)}}));
}

TEST(Protocol, GatheredRequestCarriesTheGatheredBatchWithPadding) {
  const Case c = sp_case(Path::gathered);
  const Step step = derive_step(c).value();
  const Call& call = step.calls.front();
  const json req = capture_request(1, json::object(), step, call, call.view(0), {8, 4, 2});
  // local_sizes [2, 2, 1, 1]: (0,0) (0,1) | (0,2) pad(0,3) | (1,0) | (1,1)
  const json want = {{token(0, 0, 0), token(0, 0, 1)}, {token(0, 1, 0), token(0, 1, 1)},
                     {token(0, 2, 0), token(0, 2, 1)}, {pad(0, 3, 0), pad(0, 3, 1)},
                     {token(1, 0, 0), token(1, 0, 1)}, {token(1, 1, 0), token(1, 1, 1)}};
  EXPECT_EQ(req["topk_ids"], want);
  // Not sharded here: the TP gather is what both TP ranks of dp 0 hold, concatenated.
  EXPECT_EQ(req["tp_all_gather"].size(), 12u);
}

TEST(Protocol, SingleRankHasNoMetadataAndNoTpGather) {
  Case c;
  c.max_num_tokens = 4;
  c.tokens = {2};
  const Step step = derive_step(c).value();
  const json req = capture_request(1, json::object(), step, step.calls[0], step.calls[0].view(0), {4, 1, 1});
  EXPECT_TRUE(req["dp_metadata"].is_null());
  EXPECT_FALSE(req.contains("tp_all_gather"));
}

TEST(Protocol, ReadsTheThreeReplyForms) {
  const BufferShape b{8, 4, 2};
  auto rows = read_capture_reply(json::parse(R"({"id": 3, "branch": "local", "tp_all_gather": false,
                                                 "rows": [{"dst_row": 0, "values": [5, 6]}]})"), b);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  EXPECT_EQ(rows->branch, "local");
  EXPECT_FALSE(rows->has_copies);
  ASSERT_EQ(rows->writes.size(), 1u);
  EXPECT_EQ(rows->writes[0].values, (std::vector<int32_t>{5, 6}));

  auto copies = read_capture_reply(
      json::parse(R"({"id": 4, "copies": [{"dst_row": 0, "src_row": 2, "rows": 3, "from_tp_gather": true}]})"), b);
  ASSERT_TRUE(copies.ok()) << copies.error().message;
  EXPECT_TRUE(copies->has_copies);
  EXPECT_EQ(copies->copies, (std::vector<Copy>{{0, 2, 3, true}}));
  EXPECT_TRUE(copies->used_tp_all_gather);
  EXPECT_EQ(copies->branch, "unnamed");

  auto error = read_capture_reply(json::parse(R"({"id": 5, "error": "assert total == n"})"), b);
  ASSERT_TRUE(error.ok());
  EXPECT_TRUE(error->rejected);
  EXPECT_EQ(error->error, "assert total == n");
  EXPECT_EQ(error->branch, "error");
}

std::string reply_error(const char* text) {
  auto r = read_capture_reply(json::parse(text), {8, 4, 2});
  return r.ok() ? "(ok)" : r.error().message;
}

TEST(Protocol, ReplyErrorsNameTheField) {
  EXPECT_EQ(reply_error(R"([1])"), "expected a JSON object, got array");
  EXPECT_EQ(reply_error(R"({"rows": []})"), "missing \"id\"");
  EXPECT_EQ(reply_error(R"({"id": "7", "rows": []})"), "id: expected an integer, got string");
  EXPECT_EQ(reply_error(R"({"id": 1, "row": []})"),
            "unknown key \"row\" (allowed: id, branch, rows, copies, error, tp_all_gather)");
  EXPECT_EQ(reply_error(R"({"id": 1, "rows": [], "error": "x"})"),
            "expected exactly one of \"rows\", \"copies\" or \"error\", got 2");
  EXPECT_EQ(reply_error(R"({"id": 1, "rows": [{"dst_row": 0, "values": [1, 4294967296]}]})"),
            "rows[0].values[1]: 4294967296 is out of range [-2147483648, 2147483647]");
  EXPECT_EQ(reply_error(R"({"id": 1, "copies": [{"dst_row": 0, "src_row": -1, "rows": 1}]})"),
            "copies[0].src_row: -1 is out of range [0, 1099511627776]");
  EXPECT_EQ(reply_error(R"({"id": 1, "copies": [{"dst_row": 0, "rows": 1}]})"), "copies[0]: missing \"src_row\"");
  EXPECT_EQ(reply_error(R"({"id": 1, "tp_all_gather": 1, "rows": []})"), "tp_all_gather: expected true or false, got an integer");
}

TEST(Protocol, HelloChecksTheProtocolAndReadsTheSizing) {
  auto hello = read_hello(json::parse(R"({"type": "hello", "protocol": "r3fuzz-adapter/1", "name": "x",
                                          "version": "2", "replay_rows": "max_num_tokens"})"));
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->name, "x");
  EXPECT_EQ(hello->replay_rows, ReplaySizing::max_num_tokens);
  auto bad = read_hello(json::parse(R"({"protocol": "r3fuzz-adapter/1", "name": "x", "replay_rows": "huge"})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "hello.replay_rows: \"huge\" is not one of max_num_tokens, dp_group, dispatch_group");
  EXPECT_EQ(hello_request(), (json{{"type", "hello"}, {"protocol", "r3fuzz-adapter/1"}}));
}

TEST(Protocol, ReplaySizingsFollowTheSpec) {
  Case c = sp_case(Path::gathered);
  EXPECT_EQ(replay_rows_for(ReplaySizing::max_num_tokens, c), 8);
  EXPECT_EQ(replay_rows_for(ReplaySizing::dp_group, c), 16);
  EXPECT_EQ(replay_rows_for(ReplaySizing::dispatch_group, c), 32);
}

// Issue 22 item 14: a 50 MB error text is kept cut, its length stated, at a character boundary.
TEST(Protocol, LongErrorTextsAreStoredCut) {
  EXPECT_EQ(stored_reply_text("short"), "short");
  const std::string kept = stored_reply_text(std::string(50000000, 'E'));
  EXPECT_EQ(kept, std::string(kMaxStoredReplyTextBytes, 'E') + "... (50000000 bytes in all)");
  const std::string accented = stored_reply_text(std::string(kMaxStoredReplyTextBytes - 1, 'a') + "\xc3\xa9 more");
  EXPECT_EQ(accented, std::string(kMaxStoredReplyTextBytes - 1, 'a') + "... (" +
                          std::to_string(kMaxStoredReplyTextBytes + 6) + " bytes in all)");
  const auto reply = read_capture_reply(nlohmann::json{{"id", 1}, {"error", std::string(10000, 'x')}}, {4, 2, 1});
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->error.size(), kMaxStoredReplyTextBytes + std::string("... (10000 bytes in all)").size());
}

// Every other text of a reply goes through the same cut: the hello's strings, a branch, a key
// named in an error, in both protocols.
TEST(Protocol, EveryReplyTextIsStoredCut) {
  const std::string huge(100000, 'n');
  const std::string cut = std::string(kMaxStoredReplyTextBytes, 'n') + "... (100000 bytes in all)";
  const auto hello = read_hello(nlohmann::json{{"protocol", "r3fuzz-adapter/1"}, {"name", huge}, {"version", huge}});
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->name, cut);
  EXPECT_EQ(hello->version, cut);
  EXPECT_EQ(read_hello(nlohmann::json{{"protocol", huge}, {"name", "a"}}).error().message,
            "hello: the adapter speaks protocol \"" + cut + "\", r3fuzz speaks \"r3fuzz-adapter/1\"");
  EXPECT_EQ(read_capture_reply(nlohmann::json{{"id", 1}, {"rows", nlohmann::json::array()}, {huge, 1}}, {4, 2, 1})
                .error()
                .message,
            "unknown key \"" + cut + "\" (allowed: id, branch, rows, copies, error, tp_all_gather)");
  EXPECT_EQ(read_capture_reply(nlohmann::json{{"id", 1}, {"rows", nlohmann::json::array()}, {"branch", huge}}, {4, 2, 1})
                .error()
                .message,
            "branch: expected 1 to 64 characters");
  EXPECT_EQ(read_reply_string(nlohmann::json(huge), "x").value(), cut);
}

}  // namespace
}  // namespace r3
