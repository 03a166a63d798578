// vllm-ascend's export part (fuzz/engines/ascend/export.cpp): the module builds the plugin's patched
// capturer, names the step's MoECommType, expects every TP rank's buffer to hold its DP rank's
// tokens, and fakes _EXTRA_CTX and torch.distributed's all_gather (export_harness.hpp).
#include <gtest/gtest.h>

#include "fuzz/export/pytest_writer.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "tests/support/ascend_fixtures.hpp"

namespace r3 {
namespace {

TEST(AscendExport, Issue15451sStepAsAPytestOfThePatchedCapture) {
  const Case c = test::ascend_case(1, 2, true, false, {2});
  auto text = pytest_module(c, {"issue-15451.json", "", "r3fuzz export issue-15451.json --pytest"});
  ASSERT_TRUE(text.ok()) << text.error().message;
  for (const char* line : {"vllm_ascend.patch.worker.patch_routed_experts_capture:RoutedExpertsCapturer",
                           "COMM = \"MC2\"  # the step's MoECommType",
                           "    (0, 0): [(0, \"token\", 0, 0, 2)],\n    (0, 1): [(0, \"token\", 0, 0, 2)],",
                           "\"received\": [0, 2], \"tp_gather\": [1, 1]",
                           "extra = ExtraContext(getattr(module.MoECommType, COMM), NUM_TOKENS[dp])",
                           "monkeypatch.setattr(module, \"dist\", Dist(tp_group), raising=False)"}) {
    EXPECT_NE(text->find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace r3
