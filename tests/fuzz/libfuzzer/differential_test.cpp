#include "fuzz/libfuzzer/differential.hpp"

#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "fuzz/codec/case_json.hpp"
#include "tests/support/case_fixtures.hpp"
#include "tests/support/scratch_dir.hpp"

namespace r3 {
namespace {

GetEnv env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

Case regression(const std::string& name) {
  auto c = read_case_file(std::string(R3FUZZ_SOURCE_DIR) + "/corpus/regression/" + name);
  EXPECT_TRUE(c) << c.error().message;
  Case plain = *c;
  plain.note.clear();
  plain.expect.reset();
  return plain;
}

TEST(DifferentialConfig, ReadsTheEnvironment) {
  auto config = differential_config_from_env(env({{"R3FUZZ_IMPLS", "vllm-50874, r3-fixed"},
                                                  {"R3FUZZ_STRICT", "1"},
                                                  {"R3FUZZ_KNOWN", "corpus/regression"}}));
  ASSERT_TRUE(config);
  EXPECT_EQ(config->impls, (std::vector<std::string>{"vllm-50874", "r3-fixed"}));
  EXPECT_TRUE(config->strict);
  EXPECT_EQ(config->known_dir, "corpus/regression");
  auto bad = differential_config_from_env(env({{"R3FUZZ_STRICT", "yes"}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "R3FUZZ_STRICT: \"yes\" is not 0 or 1");
}

TEST(DifferentialConfig, MetadataOverridesAreOffUnlessAskedFor) {
  auto off = differential_config_from_env(env({}));
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->metadata_overrides);
  auto on = differential_config_from_env(env({{"R3FUZZ_METADATA_OVERRIDES", "1"}}));
  ASSERT_TRUE(on);
  EXPECT_TRUE(on->metadata_overrides);
  auto bad = differential_config_from_env(env({{"R3FUZZ_METADATA_OVERRIDES", "on"}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "R3FUZZ_METADATA_OVERRIDES: \"on\" is not 0 or 1");
}

TEST(DifferentialRunner, SkipsMetadataOverridesUnlessAskedFor) {
  // Equal sums with permuted counts: no capture code can see the disagreement from shapes.
  Case c = test::make_case({2, 1, false, false}, 4, {3, 1}, Path::gathered);
  c.metadata = MetadataOverride{std::vector<int64_t>{1, 3}, true, std::vector<int64_t>{1, 3}};
  auto lenient = DifferentialRunner::create({{"r3-fixed"}, "", false, ""});
  ASSERT_TRUE(lenient);
  const DifferentialVerdict skipped = lenient->run(c);
  EXPECT_TRUE(skipped.skipped);
  EXPECT_FALSE(skipped.abort);
  DifferentialConfig config{{"r3-fixed"}, "", false, ""};
  config.metadata_overrides = true;
  config.profile = Profile::any();
  auto judging = DifferentialRunner::create(config);
  ASSERT_TRUE(judging);
  const DifferentialVerdict judged = judging->run(c);
  EXPECT_FALSE(judged.skipped);
  EXPECT_TRUE(judged.abort);
  EXPECT_NE(judged.report.find("r3-fixed/missed_reject/gathered/"), std::string::npos) << judged.report;
}

TEST(DifferentialRunner, DefaultsToVllm50874AndNamesUnknownImplementations) {
  auto runner = DifferentialRunner::create({});
  ASSERT_TRUE(runner) << runner.error().message;
  ASSERT_FALSE(runner->implementations().empty());
  EXPECT_EQ(runner->implementations()[0]->name(), "vllm-50874");
  auto unknown = DifferentialRunner::create({{"no-such-impl"}, "", false, ""});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message.rfind("R3FUZZ_IMPLS: --impl no-such-impl: unknown implementation", 0), 0u)
      << unknown.error().message;
}

// Each engine the profile covers, in registry order: its current model, then the GPU pipeline
// taking its decisions where the build has one ("gpu" for the default engine, else "gpu:MODEL").
TEST(DifferentialRunner, DefaultsToEachCoveredEnginesCurrentModelAndItsGpuPipeline) {
  auto names_under = [](std::string profile) {
    DifferentialConfig config;
    config.profile = parse_profile(profile).value();
    auto runner = DifferentialRunner::create(config);
    EXPECT_TRUE(runner) << runner.error().message;
    std::vector<std::string> names;
    if (runner)
      for (const auto& impl : runner->implementations()) names.push_back(impl->name());
    return names;
  };
  // Each model, followed by its GPU pipeline where this build makes one.
  const std::map<std::string, std::string> gpu_of = {{"vllm-50874", "gpu"}, {"sglang", "gpu:sglang"}, {"trtllm", "gpu:trtllm"}, {"ascend", "gpu:ascend"}};
  auto models_of = [&](const std::vector<std::string>& names) {
    std::vector<std::string> models;
    for (const std::string& name : names) {
      const auto gpu = models.empty() ? gpu_of.end() : gpu_of.find(models.back());
      if (gpu != gpu_of.end() && name == gpu->second) continue;
      models.push_back(name);
    }
    return models;
  };
  EXPECT_EQ(models_of(names_under("any")), (std::vector<std::string>{"vllm-50874", "sglang", "trtllm", "ascend"}));
  EXPECT_EQ(models_of(names_under("vllm-legacy")), (std::vector<std::string>{"vllm-50874"}));
  EXPECT_EQ(models_of(names_under("sglang-miles")), (std::vector<std::string>{"sglang"}));
}

TEST(DifferentialRunner, LatentVerdictsAbortOnlyWhenStrict) {
  const Case latent = regression("vllm-50874-latent-one-row-sp-shard.json");
  auto lenient = DifferentialRunner::create({{"vllm-50874"}, "", false, ""});
  ASSERT_TRUE(lenient);
  EXPECT_FALSE(lenient->run(latent).abort);
  auto strict = DifferentialRunner::create({{"vllm-50874"}, "", true, ""});
  ASSERT_TRUE(strict);
  const DifferentialVerdict v = strict->run(latent);
  EXPECT_TRUE(v.abort);
  EXPECT_NE(v.report.find("vllm-50874/wrong_rows/sp_shard/local (latent, 1 case)"), std::string::npos) << v.report;
  EXPECT_NE(v.report.find("buffer row 0 of dp 0 tp 1 holds SP padding row 1 of dp 0, expected token (0, 0)"),
            std::string::npos);
  // The report ends with the case as JSON, its expectation filled in: it reads back.
  const size_t json_at = v.report.find("{\n  \"format\"");
  ASSERT_NE(json_at, std::string::npos);
  auto back = case_from_json_text(v.report.substr(json_at));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->expect, (Expectation{"vllm-50874", Verdict::wrong_rows, Severity::latent}));
  EXPECT_EQ(back->tokens, latent.tokens);
}

TEST(DifferentialRunner, KnownSignaturesFromRegressionCasesDoNotAbort) {
  const Case overwrite = regression("vllm-50874-wrong-rows-microbatch-overwrite.json");
  auto fresh = DifferentialRunner::create({{"vllm-50874"}, "", false, ""});
  ASSERT_TRUE(fresh);
  EXPECT_TRUE(fresh->run(overwrite).abort);
  auto known = DifferentialRunner::create({{"vllm-50874"}, "", false, std::string(R3FUZZ_SOURCE_DIR) + "/corpus/regression"});
  ASSERT_TRUE(known) << known.error().message;
  const DifferentialVerdict v = known->run(overwrite);
  EXPECT_FALSE(v.abort);
  ASSERT_EQ(v.known_hits.size(), 1u);
  EXPECT_EQ(v.known_hits[0].impl, "vllm-50874");
  EXPECT_EQ(v.known_hits[0].verdict, Verdict::wrong_rows);
}

// R3FUZZ_KNOWN works on findings: the micro-batch overwrite on the SP path has a signature no
// regression case shows (sp_shard/sp_allgather), yet it reduces to the documented local case.
TEST(DifferentialRunner, KnownFindingsCoverSignaturesNoRegressionCaseShows) {
  Case overwrite = test::make_case(test::kDp2Tp2EpSp, 4, {4, 4}, Path::sp_shard);
  overwrite.padding = {PaddingMode::dp_max, {}};
  overwrite.idle_dummy = true;
  overwrite.microbatches = 2;
  auto fresh = DifferentialRunner::create({{"vllm-50874"}, "", false, ""});
  ASSERT_TRUE(fresh);
  const DifferentialVerdict unknown = fresh->run(overwrite);
  EXPECT_TRUE(unknown.abort);
  EXPECT_NE(unknown.report.find("vllm-50874/wrong_rows/sp_shard/sp_allgather"), std::string::npos) << unknown.report;
  auto known = DifferentialRunner::create({{"vllm-50874"}, "", false, std::string(R3FUZZ_SOURCE_DIR) + "/corpus/regression"});
  ASSERT_TRUE(known) << known.error().message;
  const Signature sp{"vllm-50874", Verdict::wrong_rows, Path::sp_shard, {}, "sp_allgather"};
  EXPECT_EQ(known->known().count(sp), 0u);
  const DifferentialVerdict v = known->run(overwrite);
  EXPECT_FALSE(v.abort) << v.report;
  ASSERT_EQ(v.known_hits.size(), 1u);
  EXPECT_EQ(v.known_hits[0], sp);
  EXPECT_EQ(known->known().count(sp), 1u) << "learnt, so the next hit needs no shrinking";
  // A bug of another verdict stays unknown.
  Case capacity = test::make_case({2, 1, false, false}, 1, {1, 1}, Path::gathered);
  capacity.idle_dummy = true;
  capacity.monolithic = true;
  auto pre = DifferentialRunner::create({{"vllm-pre-50874"}, "", false, std::string(R3FUZZ_SOURCE_DIR) + "/corpus/regression"});
  ASSERT_TRUE(pre);
  Case reject = test::make_case(test::kDp2Tp2EpSp, 4, {3, 1}, Path::sp_shard);
  reject.idle_dummy = true;
  EXPECT_FALSE(pre->run(capacity).abort);
  EXPECT_FALSE(pre->run(reject).abort) << "the padded-SP rejection, reduced across paths";
}

TEST(DifferentialRunner, AKnownCaseNamingACommandIsRefusedNotRun) {
  // ci-fuzz.sh points R3FUZZ_KNOWN at corpus/regression, which pull requests change: files are
  // data, never commands (docs/SECURITY.md).
  const test::ScratchDir dir("r3fuzz-differential");
  Case c = regression("vllm-50874-wrong-rows-microbatch-overwrite.json");
  const std::string marker = (dir.path() / "PWNED").string();
  c.expect = Expectation{"external:touch " + marker, Verdict::wrong_rows, Severity::failure};
  const std::string file = (dir.path() / "pwn.json").string();
  ASSERT_TRUE(write_case_file(file, c).ok());
  auto runner = DifferentialRunner::create({{"vllm-50874"}, "", false, dir.path().string()});
  ASSERT_FALSE(runner);
  EXPECT_EQ(runner.error().message, file + ": expect.impl \"external:touch " + marker +
                                        "\" names an external command; r3fuzz runs commands only from its command "
                                        "line: pass --impl with that name, or --allow-external-from-files, to run it");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// Policy models are judged symbolically; each implementation's judgement is reused from input
// to input, so a failing input must leave nothing behind for the passing one after it, nor the
// passing one for the next failing one.
TEST(DifferentialRunner, JudgesPoliciesSymbolicallyAndReusesNothingButStorage) {
  const Case failing = regression("vllm-50874-wrong-rows-microbatch-overwrite.json");
  const Case passing =
      test::with_model_at_layer(test::make_case(test::kDp2Tp2EpSp, 8, {5, 3}, Path::gathered), {2, 1, 8}, 0);
  auto runner = DifferentialRunner::create({{"vllm-50874", "r3-fixed"}, "", false, ""});
  ASSERT_TRUE(runner) << runner.error().message;
  const DifferentialVerdict first = runner->run(failing);
  ASSERT_TRUE(first.abort);
  EXPECT_NE(first.report.find("vllm-50874/wrong_rows/"), std::string::npos) << first.report;
  EXPECT_NE(first.report.find(", judged symbolic\n"), std::string::npos) << first.report;
  EXPECT_EQ(first.report.find("r3-fixed/"), std::string::npos) << first.report;
  const DifferentialVerdict clean = runner->run(passing);
  EXPECT_FALSE(clean.abort) << clean.report;
  EXPECT_TRUE(clean.report.empty());
  const DifferentialVerdict again = runner->run(failing);
  EXPECT_EQ(again.report, first.report);
}

TEST(DifferentialRunner, PassingCasesReportNothing) {
  const Case c =
      test::with_model_at_layer(test::make_case(test::kDp2Tp2EpSp, 8, {5, 3}, Path::gathered), {2, 1, 8}, 0);
  auto runner = DifferentialRunner::create({{"vllm-50874", "r3-fixed"}, "", true, ""});
  ASSERT_TRUE(runner);
  const DifferentialVerdict v = runner->run(c);
  EXPECT_FALSE(v.abort);
  EXPECT_TRUE(v.report.empty());
  EXPECT_TRUE(v.known_hits.empty());
}

}  // namespace
}  // namespace r3
