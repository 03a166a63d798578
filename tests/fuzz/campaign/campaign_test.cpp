#include "fuzz/campaign/campaign.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "fuzz/implementations/registry.hpp"
#include "fuzz/campaign/report.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/shrink/campaign_hook.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/layout.hpp"
#include "tests/support/scratch_dir.hpp"

namespace r3 {
namespace {

std::vector<std::unique_ptr<Implementation>> impls(std::vector<std::string> names) {
  std::vector<std::unique_ptr<Implementation>> out;
  for (const std::string& name : names) out.push_back(std::move(make_implementation(name, {})).value());
  return out;
}

CampaignOptions cases(int64_t n, Mode mode = Mode::mixed) {
  CampaignOptions o;
  o.max_cases = n;
  o.mode = mode;
  o.out_dir.clear();
  return o;
}

const Failure* find(const CampaignReport& r, const std::string& prefix) {
  for (const Failure& f : r.failures)
    if (f.signature.text().rfind(prefix, 0) == 0) return &f;
  return nullptr;
}

TEST(Campaign, SameSeedSameReport) {
  const auto two = impls({"vllm-50874", "vllm-pre-50874"});
  const CampaignReport a = run_campaign(cases(1500), two).value();
  const CampaignReport b = run_campaign(cases(1500), two).value();
  EXPECT_EQ(report_json(a, false).dump(), report_json(b, false).dump());
  EXPECT_EQ(report_text(a, false), report_text(b, false));
  EXPECT_FALSE(report_json(a, false).contains("timing"));
  EXPECT_TRUE(report_json(a, true).contains("timing"));
  CampaignOptions other = cases(1500);
  other.seed = 2;
  EXPECT_NE(report_json(run_campaign(other, two).value(), false).dump(), report_json(a, false).dump());
}

TEST(Campaign, CatchesPre50874WithinTheFirstThousandCases) {
  const CampaignReport r = run_campaign(cases(1000), impls({"vllm-pre-50874"})).value();
  const Failure* capacity = find(r, "vllm-pre-50874/capacity/gathered/");
  ASSERT_NE(capacity, nullptr);
  EXPECT_TRUE(capacity->c.monolithic);
  EXPECT_EQ(capacity->detail.rfind("replay buffer has ", 0), 0u) << capacity->detail;
  const Failure* shards = find(r, "vllm-pre-50874/spurious_reject/sp_shard/error");
  ASSERT_NE(shards, nullptr);
  EXPECT_NE(shards->detail.find("assert total == n failed"), std::string::npos);
  EXPECT_EQ(r.exit_code(), 1);
}

// Under the default profile (vllm) every failure-severity verdict of vllm-50874 needs
// micro-batching: the only single-call difference left is the latent one-row SP shard.
TEST(Campaign, UnderProfileVllmEveryVllm50874FailureNeedsMicroBatching) {
  const auto vllm = impls({"vllm-50874"});
  int failures = 0, latent = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    const Case c = generate_case(1, i, {}).c;
    ASSERT_TRUE(in_profile(c, kDefaultProfile)) << "case #" << i;
    const Judgement j = judge_case(*vllm[0], c, derive_step(c).value(), JudgeMode::symbolic);
    if (!j.failed()) continue;
    if (j.severity == Severity::latent) {
      ++latent;
      EXPECT_EQ(c.path, Path::sp_shard) << "case #" << i << ": " << j.detail;
      continue;
    }
    ++failures;
    EXPECT_GT(c.microbatches, 1) << "case #" << i << ": " << j.detail;
    EXPECT_EQ(j.verdict, Verdict::wrong_rows) << "case #" << i << ": " << j.detail;
  }
  EXPECT_GT(failures, 0);
  EXPECT_GT(latent, 0);
}

// Under profile any, vllm-50874 fails plain steps (no micro-batches, no DP chunking) in two
// known ways only: capacity where a CUDA-graph bucket above M pads some n_d past M (corner case
// 7), and the latent one-row SP shard on TP ranks > 0 (corner case 2). Everything else it gets
// wrong needs section 9: micro-batches, or DP chunking.
TEST(Campaign, Vllm50874FailsSingleCallCasesOnlyInTheKnownWays) {
  const auto vllm = impls({"vllm-50874"});
  int capacity = 0, latent = 0, multi_call = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    const Case c = generate_case(1, i, {.profile = Profile::any(), .engine = vllm::engine()}).c;
    const Step step = derive_step(c).value();
    const Judgement j = judge_case(*vllm[0], c, step, JudgeMode::symbolic);
    if (!j.failed()) continue;
    if (c.microbatches > 1 || c.dp_chunk) {
      ++multi_call;
      continue;
    }
    const auto& n = step.num_tokens_across_dp;
    if (j.verdict == Verdict::capacity) {
      ++capacity;
      EXPECT_EQ(c.padding.mode, PaddingMode::cudagraph) << "case #" << i;
      EXPECT_GT(*std::max_element(n.begin(), n.end()), c.max_num_tokens) << "case #" << i << ": " << j.detail;
      continue;
    }
    ++latent;
    EXPECT_EQ(j.verdict, Verdict::wrong_rows) << "case #" << i << ": " << j.detail;
    EXPECT_EQ(j.severity, Severity::latent) << "case #" << i;
    EXPECT_TRUE(c.topology.sp) << "case #" << i;
    for (const RankJudgement& rank : rank_by_rank(j)) {
      if (rank.verdict == Verdict::pass) continue;
      EXPECT_GT(rank.tp, 0) << "case #" << i;
      EXPECT_EQ(n[static_cast<size_t>(rank.dp)], 1) << "case #" << i << ": " << rank.detail;
    }
  }
  EXPECT_GT(capacity, 0);
  EXPECT_GT(latent, 0);
  EXPECT_GT(multi_call, 0);
}

TEST(Campaign, R3FixedIsCleanInEveryMode) {
  for (Mode mode : {Mode::concrete, Mode::symbolic, Mode::mixed}) {
    const CampaignReport r = run_campaign(cases(3000, mode), impls({"r3-fixed"})).value();
    EXPECT_TRUE(r.failures.empty()) << to_string(mode) << ": " << r.failures.front().signature.text() << ": "
                                    << r.failures.front().detail;
    EXPECT_EQ(r.exit_code(), 0);
  }
}

TEST(Campaign, ConcreteModeJudgesOnlySmallCasesConcretely) {
  const CampaignReport r = run_campaign(cases(500, Mode::concrete), impls({"vllm-50874"})).value();
  EXPECT_EQ(r.distribution.judged.at("concrete"), 500);
  EXPECT_EQ(r.distribution.judged.count("symbolic"), 0u);
  EXPECT_EQ(r.distribution.size.count("production"), 0u);
}

TEST(Campaign, EachNewFailureIsWrittenAndReplaysToItsSignature) {
  const test::ScratchDir scratch("r3fuzz-campaign-test");
  const std::filesystem::path dir = scratch.path() / "out";  // the campaign creates it
  CampaignOptions o = cases(400);
  o.out_dir = dir.string();
  const auto two = impls({"vllm-50874", "vllm-pre-50874"});
  const CampaignReport r = run_campaign(o, two).value();
  ASSERT_FALSE(r.failures.empty());
  for (const Failure& f : r.failures) {
    ASSERT_EQ(f.file, (dir / finding_file_name(f.signature)).string());
    const Result<Case> back = read_case_file(f.file);
    ASSERT_TRUE(back.ok()) << back.error().message;
    ASSERT_TRUE(back->expect.has_value());
    EXPECT_EQ(back->expect->impl, f.signature.impl);
    EXPECT_EQ(back->expect->verdict, f.signature.verdict);
    EXPECT_EQ(back->expect->severity, f.severity);
    EXPECT_NE(back->note.find(f.detail), std::string::npos);
    const auto& impl = f.signature.impl == "vllm-50874" ? *two[0] : *two[1];
    const Judgement again = judge_case(impl, *back, derive_step(*back).value(), f.judged_as);
    EXPECT_EQ(signature_of(again, *back), f.signature);
  }
}

TEST(Campaign, AnUnwritableOutDirIsAnError) {
  CampaignOptions o = cases(200);
  o.out_dir = "/proc/r3fuzz-cannot-write-here";
  const auto result = run_campaign(o, impls({"vllm-pre-50874"}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message.rfind("--out /proc/r3fuzz-cannot-write-here: cannot create the directory", 0), 0u)
      << result.error().message;
}

TEST(Campaign, StopFlagEndsTheCampaignAfterTheCurrentCase) {
  std::atomic<bool> stop{false};
  CampaignHooks hooks;
  hooks.stop = &stop;
  int calls = 0;
  // The shrink hook runs inside a case: raising the flag there must still finish that case.
  hooks.shrink = [&](const Case& c, const Implementation&, const Signature&) {
    ++calls;
    stop = true;
    return c;
  };
  const CampaignReport r = run_campaign(cases(1000), impls({"vllm-pre-50874"}), hooks).value();
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.cases, static_cast<int64_t>(r.failures.front().case_index) + 1);
}

TEST(Campaign, ShrunkCasesAreKeptOnlyWhenTheyShowTheSameSignature) {
  CampaignHooks hooks;
  // A "shrinker" that drops every token: the failure disappears, so the found case stays.
  hooks.shrink = [](const Case& c, const Implementation&, const Signature&) {
    Case smaller = c;
    std::fill(smaller.tokens.begin(), smaller.tokens.end(), 0);
    smaller.padding = {};
    smaller.microbatches = 1;
    smaller.dp_chunk.reset();
    return smaller;
  };
  const auto one = impls({"vllm-pre-50874"});
  const CampaignReport plain = run_campaign(cases(300), one).value();
  const CampaignReport hooked = run_campaign(cases(300), one, hooks).value();
  ASSERT_EQ(plain.failures.size(), hooked.failures.size());
  for (size_t i = 0; i < plain.failures.size(); ++i) {
    const Failure& f = hooked.failures[i];
    const Result<Step> step = derive_step(f.c);
    ASSERT_TRUE(step.ok());
    EXPECT_EQ(signature_of(judge_case(*one[0], f.c, *step, f.judged_as), f.c), f.signature);
  }
}

// Every file under `dir`, by name, byte for byte.
std::map<std::string, std::string> files_under(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ostringstream bytes;
    bytes << std::ifstream(entry.path(), std::ios::binary).rdbuf();
    files[entry.path().filename().string()] = bytes.str();
  }
  return files;
}

// Cases are judged on every worker in any order but merged in case order, and shrinking,
// grouping and writing happen in the merge (on whichever worker merges): the report, as text and
// as JSON, and every failure's and finding's file are byte for byte those of one worker.
TEST(Campaign, EveryJobCountGivesTheSameReportAndFiles) {
  const std::vector<std::string> names = {"vllm-50874", "vllm-pre-50874", "gpu"};
  auto make = [&]() -> Result<std::vector<std::unique_ptr<Implementation>>> { return impls(names); };
  ShrinkOptions shrink;
  shrink.max_seconds = 1e9;       // bounded by judgements only: a time bound would make shrinking depend on load
  shrink.max_judgements = 300;
  shrink.profile = kDefaultProfile;
  std::string json, text;
  std::map<std::string, std::string> files;
  for (int jobs : {1, 2, 3}) {
    const test::ScratchDir scratch("r3fuzz-campaign-test");
    CampaignOptions o = cases(2500);
    o.seed = 11;
    o.jobs = jobs;
    o.out_dir = (scratch.path() / "out").string();
    CampaignHooks hooks;
    hooks.make_impls = make;
    hooks.shrink = campaign_shrink_hook(o.mode, shrink);
    hooks.canonical = campaign_canonical_hook(o.mode, shrink);
    const CampaignReport r = run_campaign(o, impls(names), hooks).value();
    ASSERT_GE(r.findings.size(), 3u);
    // The files are named in the reports, which name the scratch directory: compare without it.
    std::string j = report_json(r, false).dump(2), t = report_text(r, false);
    for (std::string* s : {&j, &t})
      for (size_t at; (at = s->find(o.out_dir)) != std::string::npos;) s->replace(at, o.out_dir.size(), "OUT");
    const auto written = files_under(o.out_dir);
    ASSERT_EQ(written.size(), r.failures.size() + r.findings.size());
    if (jobs == 1) {
      json = j, text = t, files = written;
      continue;
    }
    EXPECT_EQ(j, json) << jobs << " jobs";
    EXPECT_EQ(t, text) << jobs << " jobs";
    EXPECT_TRUE(written == files) << jobs << " jobs: the files differ";
  }
}

// vllm-pre-50874, running out of memory on every case with TP 3 and DP 3 (as a judgement does
// under a memory cap).
class OutOfMemoryOnTp3Dp3 final : public Implementation {
 public:
  OutOfMemoryOnTp3Dp3() : inner_(std::move(make_implementation("vllm-pre-50874", {})).value()) {}
  std::string name() const override { return inner_->name(); }
  Allocation allocate(const Case& c) const override {
    if (c.topology.tp == 3 && c.topology.dp == 3) throw std::bad_alloc();
    return inner_->allocate(c);
  }
  const CapturePolicy* policy() const override { return inner_->policy(); }
  Result<ConcreteOutcome> run_concrete(const Case& c, const Step& step) const override {
    (void)allocate(c);  // the same cases run out of memory in concrete mode
    return inner_->run_concrete(c, step);
  }
  bool serves(Engine engine) const override { return inner_->serves(engine); }

 private:
  std::unique_ptr<Implementation> inner_;
};

// A judgement that throws on a worker's thread does not end the process: the campaign stops
// before that case, its report (the same for every job count) covers the cases before it, the
// findings so far are written, and the run exits 3 naming the case.
TEST(Campaign, AJudgementThatThrowsStopsTheRunWithItsFindingsWritten) {
  std::string text;
  for (int jobs : {1, 2}) {
    const test::ScratchDir scratch("r3fuzz-campaign-test");
    CampaignOptions o = cases(2000);
    o.jobs = jobs;
    o.out_dir = (scratch.path() / "out").string();
    auto make = []() -> Result<std::vector<std::unique_ptr<Implementation>>> {
      std::vector<std::unique_ptr<Implementation>> out;
      out.push_back(std::make_unique<OutOfMemoryOnTp3Dp3>());
      return out;
    };
    CampaignHooks hooks;
    hooks.make_impls = make;
    const CampaignReport r = run_campaign(o, make().value(), hooks).value();
    ASSERT_TRUE(r.internal_error.has_value());
    EXPECT_EQ(*r.internal_error, "case " + std::to_string(r.cases) + ": std::bad_alloc");
    EXPECT_GT(r.cases, 0);
    EXPECT_EQ(r.exit_code(), 3);
    EXPECT_FALSE(r.findings.empty());  // vllm-pre-50874 fails within the cases before it
    EXPECT_EQ(files_under(o.out_dir).size(), r.failures.size() + r.findings.size());
    std::string t = report_text(r, false);
    for (size_t at; (at = t.find(o.out_dir)) != std::string::npos;) t.replace(at, o.out_dir.size(), "OUT");
    EXPECT_NE(t.find(" cases (stopped by an internal error); judgements: "), std::string::npos) << t;
    EXPECT_NE(t.find("\ninternal error at " + *r.internal_error +
                     " (a bug in r3fuzz, or out of memory): this report covers the cases before it\n"),
              std::string::npos)
        << t;
    if (jobs == 1) text = t;
    EXPECT_EQ(t, text) << jobs << " jobs";
  }
}

TEST(Campaign, LatentFindingsFailOnlyUnderStrict) {
  CampaignReport r;
  r.failures.push_back(Failure{});
  r.failures.back().severity = Severity::latent;
  EXPECT_EQ(r.exit_code(), 0);
  r.options.strict = true;
  EXPECT_EQ(r.exit_code(), 1);
  r.options.strict = false;
  r.failures.back().severity = Severity::failure;
  EXPECT_EQ(r.exit_code(), 1);
}

}  // namespace
}  // namespace r3
