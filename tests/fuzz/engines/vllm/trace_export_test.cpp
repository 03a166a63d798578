// vLLM's trace export part (fuzz/engines/vllm/trace_export.cpp): each step as the AuxOutput
// connector sees it (the preemption before the schedule, each scheduled request with its range,
// num_tokens before and after, whether the step samples for it and the weight versions of the KV
// it holds, the requests the step finishes), the store's size; and the traces the synchronous
// harness cannot drive, refused saying why.
#include <gtest/gtest.h>

#include "fuzz/engines/vllm/parts.hpp"
#include "tests/support/trace_export_data.hpp"

namespace r3::vllm {
namespace {

Result<std::string> data_of(const std::string& name) { return test::trace_export_data(trace_export_part(), name); }

using test::has_line;

// L8: request 1 is preempted at step 2 and resumes at step 4 after a weight update, its first 8
// positions a hit of KV computed at version 0.
TEST(VllmTraceExport, PreemptedRequestResumesWithTheVersionsOfItsKv) {
  auto data = data_of("regression/vllm-preempt-reemit-wrong_route.json");
  ASSERT_TRUE(data.ok()) << data.error().message;
  for (const char* line : {
           "DP, TP, PAGE = 1, 1, 2",
           "KV_BLOCKS = 13  # kv_cache_config.num_blocks of each DP rank: the trace's KV blocks and the null block",
           "PROMPT_START = [0, 9]  # sampling_params.routed_experts_prompt_start",
           "        (1, 0, 2, 2, 10, 10, False, [], False),",
           "    {\"events\": [(\"preempt\", 1)], \"aborted\": [], \"version\": 0,",
           "    {\"events\": [], \"aborted\": [], \"version\": 1,",
           "        (1, 8, 11, 11, 11, 12, True, [(0, 8)], False),",
           "     \"finished\": [1]},",
       }) {
    EXPECT_TRUE(has_line(*data, line)) << "missing line: " << line << "\n" << *data;
  }
}

TEST(VllmTraceExport, WhatTheSynchronousHarnessCannotDriveIsRefused) {
  for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
           {"regression/vllm-copy-late-pass.json",
            "config.overlap: under async scheduling vLLM's engine core runs the scheduler a step ahead of the "
            "worker's output; the vLLM trace harness drives the connector synchronously"},
           {"regression/vllm-pre-50874-preempted-rows-wrong_route.json",
            "profile vllm-legacy: the export drives vLLM main's AuxOutput connector; the releases before it keep a "
            "slot-keyed buffer (Scheduler._get_routed_experts), which has no harness"},
       }) {
    SCOPED_TRACE(name);
    auto data = data_of(name);
    ASSERT_FALSE(data.ok());
    EXPECT_EQ(data.error().message, why);
  }
}

}  // namespace
}  // namespace r3::vllm
