#include "fuzz/shrink/regression_artifacts.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "fuzz/implementations/registry.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/oracle/policy_implementation.hpp"
#include "fuzz/shrink/implementation_judge.hpp"
#include "reference/engines/vllm/policy.hpp"
#include "tests/support/case_fixtures.hpp"

// The TEST `r3fuzz shrink big.json --impl vllm-pre-50874` printed, pasted verbatim: it must
// compile and pass here, and the generator must still print exactly it (below).
#include "tests/fuzz/shrink/golden/spurious_reject_regression.inc"

namespace r3 {
namespace {

Case minimal_spurious_reject() { return test::smallest_sp_gathered_case(); }

Judgement judged(const Case& c, std::unique_ptr<CapturePolicy> policy) {
  PolicyImplementation impl(std::move(policy));
  return *judge_with(impl, JudgeMode::symbolic)(c);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RegressionArtifacts, TheGeneratedTestIsTheOnePastedAbove) {
  const Judgement j = judged(minimal_spurious_reject(), make_vllm_pre_50874_policy());
  const ImplementationSpec spec{"vllm-pre-50874", "", ""};
  const Case entry = regression_entry(minimal_spurious_reject(), j, spec,
                                      "minimized by r3fuzz shrink from big.json (vllm-pre-50874, judged symbolic): " +
                                          j.detail);
  EXPECT_EQ(regression_test_text(entry, j, spec, JudgeMode::symbolic),
            slurp(R3FUZZ_SOURCE_DIR "/tests/fuzz/shrink/golden/spurious_reject_regression.inc"));
}

TEST(RegressionArtifacts, EntryCarriesTheExpectation) {
  const Judgement j = judged(minimal_spurious_reject(), make_vllm_pre_50874_policy());
  const Case entry = regression_entry(minimal_spurious_reject(), j, {"r3-fixed", "tp-major-order", ""}, "why");
  EXPECT_EQ(entry.note, "why");
  ASSERT_TRUE(entry.expect.has_value());
  EXPECT_EQ(*entry.expect, (Expectation{"r3-fixed+tp-major-order", Verdict::spurious_reject, Severity::failure}));
  Case without = entry;
  without.note.clear();
  without.expect.reset();
  EXPECT_EQ(without, minimal_spurious_reject());
}

TEST(RegressionArtifacts, TestNameIsTheSignatureInGoogleTestsAlphabet) {
  const Signature s{"vllm-pre-50874", Verdict::spurious_reject, Path::sp_shard, {}, "sp_allgather"};
  EXPECT_EQ(regression_test_name(s, ""), "VllmPre50874_SpuriousReject_SpShard_SpAllgather");
  EXPECT_EQ(regression_test_name(s, "tp-major-order"), "VllmPre50874_TpMajorOrder_SpuriousReject_SpShard_SpAllgather");
}

TEST(RegressionArtifacts, AFaultIsBuiltFromImplPlusFaultAndJudgedInItsMode) {
  const Judgement j = judged(minimal_spurious_reject(), make_vllm_pre_50874_policy());
  const std::string text =
      regression_test_text(minimal_spurious_reject(), j, {"r3-fixed", "tp-major-order", ""}, JudgeMode::concrete);
  EXPECT_NE(text.find("  auto impl = r3::make_implementation(\"r3-fixed+tp-major-order\", options);\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("r3::judge_with(**impl, r3::JudgeMode::concrete)(*c);"), std::string::npos) << text;
  EXPECT_NE(text.find("\"fuzz/implementations/registry.hpp\"; links r3fuzz_shrink and r3fuzz_implementations."),
            std::string::npos)
      << text;
}

// A note that happens to hold the raw string's closing sequence gets another delimiter.
TEST(RegressionArtifacts, RawStringDelimiterAvoidsTheCaseText) {
  Case c = minimal_spurious_reject();
  c.note = "ends with )r3case";  // in JSON the closing quote follows: )r3case"
  const Judgement j = judged(c, make_vllm_pre_50874_policy());
  const std::string text = regression_test_text(c, j, {"vllm-pre-50874", "", ""}, JudgeMode::symbolic);
  EXPECT_NE(text.find("R\"r3case0("), std::string::npos) << text;
  EXPECT_NE(text.find(")r3case0\";"), std::string::npos) << text;
}

}  // namespace
}  // namespace r3
