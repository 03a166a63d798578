// The Python examples against the built-in models, through the whole campaign: the same
// generated cases, judged concretely, must give the same verdicts, branches and bug
// signatures (the implementation's name aside) as the C++ model they mirror.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "fuzz/plugin/plugin.hpp"
#include "reference/engines/vllm/model.hpp"
#include "tests/examples/torch_python.hpp"

namespace r3 {
namespace {

using test::torch_python;

const std::string kExamples = std::string(R3FUZZ_SOURCE_DIR) + "/examples/python/";

CampaignOptions concrete_campaign(int64_t cases, Profile profile = kDefaultProfile) {
  CampaignOptions o;
  o.seed = 50874;
  o.max_cases = cases;
  o.mode = Mode::concrete;
  o.out_dir = "";
  o.generator.profile = profile;
  return o;
}

// A black-box engine cannot name its branch (it reports "unnamed"): compare without it there.
std::set<std::string> signatures_without_impl(const CampaignReport& r, const std::string& impl, bool with_branch) {
  std::set<std::string> out;
  for (const Failure& f : r.failures) {
    if (f.signature.impl != impl) continue;
    Signature s = f.signature;
    s.impl = "";
    if (!with_branch && s.branch != "error") s.branch = "-";
    // Without branch names, one external signature covers what the model splits by branch, with
    // the severity of its first case (the one-row SP shard is latent, a micro-batched shard a
    // failure, both on sp_shard): severities are compared case by case in the verdict counts.
    out.insert(s.text() + (with_branch ? " " + std::string(to_string(f.severity)) : ""));
  }
  return out;
}

void expect_agreement(const std::string& external, const std::string& model, int64_t cases, bool names_branches,
                      Profile profile = kDefaultProfile) {
  auto report = plugin::run_campaign({external, model}, concrete_campaign(cases, profile));
  ASSERT_TRUE(report.ok()) << report.error().message;
  const Distribution& d = report->distribution;
  ASSERT_TRUE(d.verdict.count(external) && d.verdict.count(model));
  EXPECT_EQ(d.verdict.at(external), d.verdict.at(model));
  if (names_branches) {
    EXPECT_EQ(d.branch.at(external), d.branch.at(model));
  }
  EXPECT_FALSE(d.verdict.at(external).count("adapter_error (failure)"));
  EXPECT_EQ(signatures_without_impl(*report, external, names_branches),
            signatures_without_impl(*report, model, names_branches));
  // Not vacuous: the campaign judged many cases concretely and the model fails on some.
  EXPECT_GT(d.judged.at("concrete"), cases / 2);
  EXPECT_FALSE(signatures_without_impl(*report, model, true).empty());
}

TEST(PythonAdapters, Vllm50874AdapterAgreesWithTheModel) {
  expect_agreement("external:python3 " + kExamples + "vllm_50874_adapter.py", "vllm-50874", 3000, true);
}

// The same adapter over the unbatched exchange: one round trip per call per rank.
TEST(PythonAdapters, Vllm50874AdapterAgreesWithTheModelUnbatched) {
  expect_agreement("external:python3 " + kExamples + "vllm_50874_adapter.py --no-batch", "vllm-50874", 1000, true);
}

TEST(PythonAdapters, WrappedEngineCaptureAgreesWithThePre50874Model) {
  expect_agreement("external:python3 " + kExamples + "wrap_engine_capture.py", "vllm-pre-50874", 1500, false);
}

// The engine sample run unchanged on real torch tensors and a real int32 CPU buffer.
TEST(PythonAdapters, TorchCaptureAdapterAgreesWithThePre50874Model) {
  R3FUZZ_NEED_TORCH();
  expect_agreement("external:" + torch_python() + " " + kExamples +
                       "torch_capture_adapter.py --engine engine_capture_sample:RoutedExpertsCapturer",
                   "vllm-pre-50874", 1000, false);
}

// The project's sample engines (examples/python/sample_engines) on real torch, each against the
// C++ model it was written to match, on 2,000 generated concrete cases (issue 20).
std::string sample_adapter(const std::string& sample) {
  return "external:" + torch_python() + " " + kExamples + "torch_capture_adapter.py --engine sample_engines." +
         sample + ":RoutedExpertsCapturer --buffer-attr device_buffer --replay-rows dispatch_group";
}

TEST(PythonAdapters, TorchSampleVllm50874AgreesWithTheModel) {
  R3FUZZ_NEED_TORCH();
  expect_agreement(sample_adapter("vllm_50874"), "vllm-50874", 2000, false);
}

// r3-fixed finds nothing, so agreement is every verdict a pass on both, micro-batched steps
// included (under vllm-legacy, DP-chunked ones too).
TEST(PythonAdapters, TorchSampleR3FixedAgreesWithTheModel) {
  R3FUZZ_NEED_TORCH();
  for (Profile profile : {Profile::of(vllm::engine(), 0), Profile::of(vllm::engine(), 1)}) {
    CampaignOptions o = concrete_campaign(2000);
    o.generator.profile = profile;
    const std::string external = sample_adapter("r3_fixed");
    auto report = plugin::run_campaign({external, "r3-fixed"}, o);
    ASSERT_TRUE(report.ok()) << report.error().message;
    const Distribution& d = report->distribution;
    EXPECT_EQ(d.verdict.at(external), (std::map<std::string, int64_t>{{"pass", 2000}})) << to_string(profile);
    EXPECT_EQ(d.verdict.at("r3-fixed"), (std::map<std::string, int64_t>{{"pass", 2000}}));
    EXPECT_GT(d.calls.at(profile.variant() == 0 ? "microbatches" : "dp_chunk"), 10);
  }
}

// Without torch the adapter says so and exits 2 before it reads a request.
TEST(PythonAdapters, TorchCaptureAdapterWithoutTorchSaysSoAndExits2) {
  if (std::system("python3 -c 'import torch' >/dev/null 2>&1") == 0)
    GTEST_SKIP() << "python3 imports torch: the missing-torch path cannot run here";
  const std::string err = testing::TempDir() + "torch_adapter_stderr.txt";
  const int status = std::system(("python3 " + kExamples + "torch_capture_adapter.py </dev/null 2>" + err).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "torch_capture_adapter.py: torch is missing (No module named 'torch'); install torch to run engine "
            "capture code on real tensors, or use wrap_engine_capture.py\n");
  std::remove(err.c_str());
}

// vllm-ascend's samples through the adapter protocol's "ascend" fields (the comm type, the rank's
// own count, SP) and the plugin's torch.distributed all_gather into tensor_split slots, faked by
// torch_capture_adapter.py --engines ascend.
std::string ascend_adapter(const std::string& sample) {
  return "external:" + torch_python() + " " + kExamples + "torch_capture_adapter.py --engines ascend --engine sample_engines." +
         sample + ":RoutedExpertsCapturer --buffer-attr device_buffer";
}

// Under ascend-mrv2-rounded the sample and the model agree case for case. (Under profile ascend, A5's
// slot mismatch reads collective_mismatch in the model, which lets the ranks whose slot fits gather,
// and spurious_reject through the adapter, whose all_gather raises on every rank of the group: both
// failures of the same steps.)
TEST(PythonAdapters, TorchSampleAscendAgreesWithTheModel) {
  R3FUZZ_NEED_TORCH();
  expect_agreement(ascend_adapter("ascend"), "ascend", 1500, false, parse_profile("ascend-mrv2-rounded").value());
}

// The fixed sample, like ascend-fixed, passes every step of every vllm-ascend profile.
TEST(PythonAdapters, TorchSampleAscendFixedIsCleanUnderEveryAscendProfile) {
  R3FUZZ_NEED_TORCH();
  for (const char* name : {"ascend", "ascend-mrv2-rounded", "ascend-0.26"}) {
    const std::string external = ascend_adapter("ascend_fixed");
    auto report = plugin::run_campaign({external, "ascend-fixed"}, concrete_campaign(1000, parse_profile(name).value()));
    ASSERT_TRUE(report.ok()) << report.error().message;
    const Distribution& d = report->distribution;
    ASSERT_TRUE(d.verdict.count(external)) << name;
    EXPECT_EQ(d.verdict.at(external), d.verdict.at("ascend-fixed")) << name;
    EXPECT_EQ(d.verdict.at(external).size(), 1u) << name;  // pass only
    EXPECT_GT(d.verdict.at(external).at("pass"), 900) << name;
  }
}

}  // namespace
}  // namespace r3
