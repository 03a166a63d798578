// The batched exchange: one request holds every capture request of a case, in order, and the
// reply is read strictly: a wrong count, an id out of order, or a bad field in any reply is an
// error that names what is wrong and where.
#include "fuzz/adapter/batch.hpp"

#include <gtest/gtest.h>

#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

using nlohmann::json;

const BufferShape kBuffer{8, 4, 2};

json reply(int64_t id) { return {{"id", id}, {"branch", "local"}, {"rows", {{{"dst_row", 0}, {"values", {5, 6}}}}}}; }

std::string error_of(const json& r, int64_t first, size_t count) {
  auto got = read_batch_reply(r, first, count, kBuffer);
  return got ? std::string("(no error)") : got.error().message;
}

Case sp_case(Path path) {
  Case c = test::make_case({2, 2, true, true}, 8, {3, 2}, path);
  c.model = {4, 2, 64};
  return c;
}

// Resolved, a batch is exactly the unbatched requests in call and rank order; it carries each
// distinct tensor once.
void expect_batch_resolves_to_the_unbatched_requests(const Case& c, size_t tensors) {
  const Step step = derive_step(c).value();
  const json case_json = {{"the", "case"}};
  const json batch = json::parse(batch_request(3, case_json, step, kBuffer));
  EXPECT_EQ(batch["type"], "batch");
  EXPECT_EQ(batch["case"], case_json);
  EXPECT_EQ(batch["tensors"].size(), tensors);
  std::vector<json> want;
  int64_t id = 3;
  for (const Call& call : step.calls)
    for (size_t r = 0; r < call.rank_count(); ++r) want.push_back(capture_request(id++, case_json, step, call, call.view(r), kBuffer));
  EXPECT_EQ(resolve_batch(batch), want);
}

// An engine's request context (vllm-ascend's comm type and counts) is merged into every request,
// batched or not, per rank.
TEST(Batch, AnEnginesContextIsMergedIntoEachRanksRequest) {
  const Step step = derive_step(sp_case(Path::sp_shard)).value();
  const RequestContext context = [](const RankView& view) {
    return json{{"engine_part", {{"dp", view.dp}, {"tp", view.tp}}}};
  };
  const json case_json = {{"the", "case"}};
  const std::vector<json> batched = resolve_batch(json::parse(batch_request(3, case_json, step, kBuffer, &context)));
  ASSERT_EQ(batched.size(), 4u);
  int64_t id = 3;
  size_t i = 0;
  for (const Call& call : step.calls)
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView view = call.view(r);
      const json one = capture_request(id++, case_json, step, call, view, kBuffer, &context);
      EXPECT_EQ(one["engine_part"], (json{{"dp", view.dp}, {"tp", view.tp}}));
      EXPECT_EQ(batched[i++], one);
    }
}

TEST(Batch, ResolvesToTheUnbatchedRequestsAndCarriesEachTensorOnce) {
  // Gathered: all four ranks receive the same gathered batch, and both groups' TP all-gather is
  // that batch twice: 2 tensors, not 8.
  expect_batch_resolves_to_the_unbatched_requests(sp_case(Path::gathered), 2);
  // SP shards: each rank its own shard (4), each group its own all-gather (2).
  expect_batch_resolves_to_the_unbatched_requests(sp_case(Path::sp_shard), 6);
  // No TP: no all-gather; each DP rank receives its own tokens.
  expect_batch_resolves_to_the_unbatched_requests(test::make_case({3, 1, true, false}, 8, {3, 0, 2}, Path::local), 3);
  // DP chunks: tensors are per call.
  Case chunked = sp_case(Path::sp_shard);
  chunked.tokens = {5, 3};
  chunked.dp_chunk = 2;
  expect_batch_resolves_to_the_unbatched_requests(chunked, 12);
}

TEST(Batch, NamesTheIdsItCarries) {
  EXPECT_EQ(batch_name(3, 4), "batch [3..6]");
  EXPECT_EQ(batch_name(9, 1), "batch [9]");
}

TEST(Batch, ReadsEveryReplyInOrder) {
  const json r = {{"replies", {reply(3), {{"id", 4}, {"error", "no"}}, {{"id", 5}, {"copies", json::array()}}}}};
  auto got = read_batch_reply(r, 3, 3, kBuffer);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].id, 3);
  EXPECT_EQ((*got)[0].branch, "local");
  ASSERT_EQ((*got)[0].writes.size(), 1u);
  EXPECT_EQ((*got)[0].writes[0].values, (std::vector<int32_t>{5, 6}));
  EXPECT_TRUE((*got)[1].rejected);
  EXPECT_EQ((*got)[1].error, "no");
  EXPECT_TRUE((*got)[2].has_copies);
}

TEST(Batch, AWrongCountIsNamedWithBothCounts) {
  EXPECT_EQ(error_of({{"replies", {reply(3)}}}, 3, 2),
            "replies: expected 2 replies (one per request, in order), got 1");
  EXPECT_EQ(error_of({{"replies", {reply(3), reply(4), reply(5)}}}, 3, 2),
            "replies: expected 2 replies (one per request, in order), got 3");
  EXPECT_EQ(error_of({{"replies", json::array()}}, 3, 1),
            "replies: expected 1 replies (one per request, in order), got 0");
}

TEST(Batch, RepliesOutOfOrderAreNamedByIndex) {
  EXPECT_EQ(error_of({{"replies", {reply(4), reply(3)}}}, 3, 2),
            "replies[0] carries id 4, expected 3 (replies come in request order)");
  EXPECT_EQ(error_of({{"replies", {reply(3), reply(3)}}}, 3, 2),
            "replies[1] carries id 3, expected 4 (replies come in request order)");
}

TEST(Batch, ABadReplyInsideIsNamedByIndexAndField) {
  json bad = reply(4);
  bad["rows"][0]["values"] = {1};
  EXPECT_EQ(error_of({{"replies", {reply(3), bad}}}, 3, 2),
            "replies[1]: rows[0].values: expected a list of 2 integers (top_k), got 1 entries");
  EXPECT_EQ(error_of({{"replies", {reply(3), json{{"rows", json::array()}}}}}, 3, 2), "replies[1]: missing \"id\"");
  EXPECT_EQ(error_of({{"replies", {reply(3), 7}}}, 3, 2), "replies[1]: expected a JSON object, got an integer");
}

TEST(Batch, TheEnvelopeIsReadStrictly) {
  EXPECT_EQ(error_of(json::array(), 1, 1), "expected a JSON object, got array");
  EXPECT_EQ(error_of(json::object(), 1, 1), "missing \"replies\"");
  EXPECT_EQ(error_of({{"replies", {reply(1)}}, {"id", 1}}, 1, 1), "unknown key \"id\" (allowed: replies)");
  EXPECT_EQ(error_of({{"replies", reply(1)}}, 1, 1), "replies: expected a list, got object");
}

TEST(Batch, TheHelloAsksForBatchesWithABoolean) {
  const json base = {{"protocol", "r3fuzz-adapter/1"}, {"name", "x"}};
  EXPECT_FALSE(read_hello(base)->batch);
  json yes = base;
  yes["batch"] = true;
  EXPECT_TRUE(read_hello(yes)->batch);
  json bad = base;
  bad["batch"] = "yes";
  EXPECT_EQ(read_hello(bad).error().message, "hello.batch: expected true or false, got string");
}

}  // namespace
}  // namespace r3
