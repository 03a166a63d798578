// vllm-ascend deployments as seeds (fuzz/engines/ascend/deployment.cpp): a vLLM deployment plus the
// plugin's "ascend" object, whose traffic is vLLM's steps with the plugin's fields (decode steps
// at the deployment's ACL graph mode, prefills eager), and every bad key named.
#include "fuzz/engines/ascend/deployment.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fuzz/seed/engine_seed.hpp"
#include "fuzz/seed/seed.hpp"
#include "reference/engines/ascend/model.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"
#include "tests/support/deployment_text.hpp"

namespace r3::ascend {
namespace {

constexpr const char* kSmall = R"({
  "format": "r3fuzz-deployment/1",
  "engine": "ascend",
  "name": "small-ascend",
  "note": "a small vllm-ascend deployment",
  "topology": {"dp": 1, "tp": 2, "ep": true, "sp": false},
  "model": {"layers": 3, "top_k": 2, "experts": 8},
  "max_num_tokens": 16,
  "cudagraph": [1, 2, 4],
  "ascend": {"chip": "a3", "runner": "v1", "graph": "full_decode_only"},
  "traffic": {"decode_batches": [1, 4], "prefill_lengths": [9]}
})";

// `text` (kSmall by default) with `key`'s value replaced (or the key added).
std::string with(const std::string& key, const std::string& value, const std::string& text = kSmall) {
  return test::with_key(text, key, value);
}

// Each traffic case as "tokens/graph mode/padding/B" (B: mc2_tokens), each valid and in profile ascend.
std::vector<std::string> traffic(const std::string& text) {
  return test::seeded_traffic(text, Profile::of(engine(), 0), [](const Case& c) {
    EXPECT_EQ(c.note, "a small vllm-ascend deployment");
    return std::to_string(c.tokens.at(0)) + "/" + std::string(to_string(fields_of(c)->graph)) + "/" +
           std::string(to_string(c.padding.mode)) + "/" + std::to_string(fields_of(c)->mc2_tokens);
  });
}

TEST(AscendDeployment, SeedsVllmsTrafficAsTheStepsThePluginRuns) {
  auto d = deployment_from_json_text(kSmall);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->engine, engine());
  EXPECT_EQ(d->name, "small-ascend");
  EXPECT_EQ(default_profile_of(*d), Profile::of(engine(), 0));
  const Case base = deployment_case(*d);
  EXPECT_EQ(base.topology.tp, 2);
  EXPECT_EQ(base.layer, 2);
  EXPECT_EQ(fields_of(base)->chip, Chip::a3);
  // Decode batches 1..4 at the capture sizes and their neighbours, padded and graphed; the prefill
  // at 9 and one short, eager. B of the MC2 capacity is the largest capture size on every step.
  EXPECT_EQ(traffic(kSmall), (std::vector<std::string>{"1/full_decode_only/cudagraph/4", "2/full_decode_only/cudagraph/4",
                                                       "3/full_decode_only/cudagraph/4", "4/full_decode_only/cudagraph/4",
                                                       "9/eager/none/4", "8/eager/none/4"}));
  EXPECT_EQ(count_traffic_cases(*d), 6);
}

// With DP > 1 (which vLLM's reader takes only with a DP path) and SP on MRv2, every step is still
// the plugin's: path single, its counts fitted to the profile.
TEST(AscendDeployment, ADeploymentOfSeveralDpRanksSeedsAscendSteps) {
  const std::string two_dp = R"({"format": "r3fuzz-deployment/1", "engine": "ascend", "name": "two-dp",
    "topology": {"dp": 2, "tp": 2, "ep": true, "sp": true}, "model": {"layers": 2, "top_k": 2, "experts": 16},
    "max_num_tokens": 16, "cudagraph": [2, 4], "ascend": {"chip": "a3", "runner": "mrv2", "graph": "piecewise"},
    "traffic": {"decode_batches": [1, 4], "prefill_lengths": [5]}})";
  const std::vector<std::string> steps = test::seeded_traffic(two_dp, Profile::of(engine(), 0), [](const Case& c) {
    EXPECT_EQ(c.path, Path::single);
    return std::to_string(c.tokens.at(0)) + "," + std::to_string(c.tokens.at(1)) + "/" +
           std::string(to_string(fields_of(c)->graph));
  });
  EXPECT_EQ(steps, (std::vector<std::string>{"1,0/piecewise", "2,1/piecewise", "3,1/piecewise", "4,2/piecewise",
                                             "5,5/eager", "5,4/eager"}));
}

TEST(AscendDeployment, NamesWhatIsWrong) {
  EXPECT_EQ(test::deployment_error(with("ascend", "null")), "ascend: expected an object, got null");
  std::string no_ascend = kSmall;
  no_ascend.erase(no_ascend.find("  \"ascend\""), no_ascend.find("  \"traffic\"") - no_ascend.find("  \"ascend\""));
  EXPECT_EQ(test::deployment_error(no_ascend), "ascend: missing (an ascend deployment names chip, runner and graph)");
  EXPECT_EQ(test::deployment_error(with("path", "\"gathered\"")), "path: not a key of an ascend deployment (its comm type places the rows)");
  EXPECT_EQ(test::deployment_error(with("ascend", R"({"chip": "a9", "runner": "v1", "graph": "eager"})")).rfind("ascend.chip: ", 0), 0u);
  EXPECT_EQ(test::deployment_error(with("ascend", R"({"chip": "a3", "runner": "v1", "graph": "eager"})")),
            "ascend.graph: eager, but cudagraph lists capture sizes (name the ACL graph mode its decode steps run: "
            "piecewise, full_decode_only or npugraph_ex)");
  std::string eager = kSmall;
  eager.erase(eager.find("  \"cudagraph\""), eager.find("  \"ascend\"") - eager.find("  \"cudagraph\""));
  EXPECT_EQ(test::deployment_error(eager), "ascend.graph: full_decode_only needs the capture sizes its steps are padded to (cudagraph)");
  EXPECT_EQ(test::deployment_error(with("traffic", R"({"decode_batches": [1, 17]})")), "traffic.decode_batches: 17 is above max_num_tokens 16");
}

TEST(AscendDeployment, AMetadataLogCannotSeedIt) {
  auto d = deployment_from_json_text(kSmall);
  ASSERT_TRUE(d) << d.error().message;
  const EngineSeed* part = engine_seed(engine());
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(part->log_refusal(),
            "a metadata log records vLLM's DP metadata, not the comm type that places an Ascend step's rows; an ascend "
            "deployment seeds from its traffic only");
  EXPECT_FALSE(part->log_case(*d, R"({"num_tokens_across_dp": [3]})").ok());
}

}  // namespace
}  // namespace r3::ascend
